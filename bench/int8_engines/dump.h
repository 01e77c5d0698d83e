// Writes every layer's operands and each engine's outputs as .npy files plus
// a manifest.json, for int8_engines_torch.py to compare with PyTorch's
// quantized engines on the same bytes.
#ifndef ET_OPS_BENCH_INT8_ENGINES_DUMP_H
#define ET_OPS_BENCH_INT8_ENGINES_DUMP_H

#include <string>

namespace int8_engines {

// Prints the layer table as JSON on stdout.
void print_layers();

// Returns false (with a message on stderr) when a file cannot be written.
bool dump_outputs(const std::string& directory);

}  // namespace int8_engines

#endif  // ET_OPS_BENCH_INT8_ENGINES_DUMP_H
