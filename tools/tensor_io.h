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
// inputs (dtype and shape must match; a bfloat16 input takes a uint16 array
// of raw bits). A batch holds `count` inputs per file, stacked along a new
// first dimension: shape [count, ...the input's shape], the same count in
// every file.
struct InputFiles {
  std::vector<NpyArray> arrays;
  int64_t count = 1;
};

// Reads one array per program input, each one input or (with `batched`) a
// stack of them. Returns an empty string, or an error naming the file.
std::string read_inputs(const Program& program, const std::vector<std::string>& files, bool batched,
                        InputFiles* inputs);

// Copies item `item` (0 to inputs.count - 1) of every file into the state's inputs.
void fill_inputs(RunState& state, const InputFiles& inputs, int64_t item);

// The outputs of a batch of runs, each stacked along a new first dimension
// (shape [count, ...the output's shape], C order).
class OutputStack {
 public:
  // Empty when the program's outputs can be stacked, else why not.
  static std::string check(const Program& program);
  OutputStack(const Program& program, int64_t count);
  // Copies the state's outputs in as item `item`. Empty, or an error when
  // an output's size is not the program's.
  std::string add(const Program& program, const RunState& state, int64_t item);
  std::size_t size() const { return tensors_.size(); }
  TensorRef output(std::size_t i) const { return tensors_[i].ref(); }

 private:
  std::vector<std::vector<uint8_t>> bytes_;
  std::vector<Tensor> tensors_;
};

// "float32 [1, 16]: 0.5, -1, ... (16 values)"
std::string summarize(TensorRef tensor, std::size_t max_values = 8);

// "float32 [1, 16]"
std::string describe(TensorRef tensor);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_TENSOR_IO_H
