// Moving tensors between .npy files, a run state and the terminal.
#ifndef ET_OPS_TOOLS_TENSOR_IO_H
#define ET_OPS_TOOLS_TENSOR_IO_H

#include <string>
#include <vector>

#include "et_ops/npy.h"
#include "et_ops/program.h"
#include "et_ops/tensor.h"

namespace et_ops::tool {

// The --input files of a run, read and checked against the program's
// inputs (dtype and shape must match: a dynamic dimension takes any size
// within its bounds; a bfloat16 input takes a uint16 array of raw bits). A
// batch holds `count` inputs per file, stacked along a new first
// dimension: shape [count, ...the input's shape], the same count in every
// file.
struct InputFiles {
  std::vector<NpyArray> arrays;
  std::vector<std::string> files;
  int64_t count = 1;
};

// Reads one array per program input, each one input or (with `batched`) a
// stack of them. Returns an empty string, or an error naming the file.
std::string read_inputs(const Program& program, const std::vector<std::string>& files, bool batched,
                        InputFiles* inputs);

// Gives the state's inputs the sizes of item `item` (0 to inputs.count - 1)
// of every file and copies it in. Empty, or an error naming the file (a
// size the input's symbolic sizes cannot take).
std::string fill_inputs(RunState& state, const InputFiles& inputs, int64_t item, bool batched);

// The outputs of a batch of runs, each stacked along a new first dimension
// (shape [count, ...the output's shape in the first run], C order).
class OutputStack {
 public:
  // Empty when the program's outputs can be stacked, else why not.
  static std::string check(const Program& program);
  // `count` items; the outputs' sizes come with the first (dynamic shapes).
  explicit OutputStack(int64_t count) : count_(count) {}
  // Copies the state's outputs in as item `item` (the first call sizes the
  // stacks). Empty, or an error when an output's dtype or shape differs
  // from the first item's.
  std::string add(const Program& program, const RunState& state, int64_t item);
  std::size_t size() const { return tensors_.size(); }
  TensorRef output(std::size_t i) const { return tensors_[i].ref(); }

 private:
  int64_t count_ = 0;
  std::vector<std::vector<uint8_t>> bytes_;
  std::vector<Tensor> tensors_;
};

// "float32 [1, 16]: 0.5, -1, ... (16 values)"
std::string summarize(TensorRef tensor, std::size_t max_values = 8);

// "float32 [1, 16]"
std::string describe(TensorRef tensor);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_TENSOR_IO_H
