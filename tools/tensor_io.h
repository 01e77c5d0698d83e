// Moving tensors between .npy files, a run state and the terminal.
#ifndef ET_OPS_TOOLS_TENSOR_IO_H
#define ET_OPS_TOOLS_TENSOR_IO_H

#include <string>
#include <vector>

#include "et_ops/program.h"
#include "et_ops/tensor.h"

namespace et_ops::tool {

// Reads each .npy file into the matching program input (dtype and shape
// must match; a bfloat16 input takes a uint16 array of raw bits).
// Returns an empty string, or an error naming the file.
std::string fill_inputs(const Program& program, RunState& state, const std::vector<std::string>& files);

// "float32 [1, 16]: 0.5, -1, ... (16 values)"
std::string summarize(TensorRef tensor, std::size_t max_values = 8);

// "float32 [1, 16]"
std::string describe(TensorRef tensor);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_TENSOR_IO_H
