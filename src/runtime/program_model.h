// A validated description of an .etp header: what the file says, with every
// index checked, before anything is resolved or allocated.
#ifndef ET_OPS_SRC_RUNTIME_PROGRAM_MODEL_H
#define ET_OPS_SRC_RUNTIME_PROGRAM_MODEL_H

#include <cstdint>
#include <string>
#include <vector>

#include "et_ops/program.h"

namespace et_ops::runtime {

enum class ValueKind { Tensor, Int, Double, Bool, ScalarType, IntList, TensorList, OptionalTensorList, String, None };

// An element of an optional_tensor_list that is None.
inline constexpr uint32_t kNoTensor = UINT32_MAX;

struct TensorModel {
  TensorSpec spec;  // a symbolic size holds its largest value (what memory is planned for)
  std::vector<int64_t> strides;  // elements, consistent with spec.dim_order
  bool constant = false;  // read-only bytes in the file
  bool state = false;     // bytes in the file copied into each run state (version 2)
  uint64_t data_offset = 0;  // from the start of the data segment (constants and state)
  std::vector<SymbolicInt> symbolic_sizes;  // one per dimension; empty when every size is static
};

struct ValueModel {
  ValueKind kind = ValueKind::None;
  TensorModel tensor;       // kind == Tensor
  int64_t integer = 0;      // Int; Bool (0 or 1); ScalarType (et_ops_dtype number)
  double real = 0.0;        // Double
  std::vector<int64_t> list;  // IntList
  // Int: one entry, IntList: one per element, when symbolic (version 2); the
  // payload above then holds the value at the symbols' largest values.
  std::vector<SymbolicInt> symbolic;
  std::vector<uint32_t> elements;  // (Optional)TensorList: the value indices of its tensors; kNoTensor: None
  std::string text;                // String
};

struct InstructionModel {
  std::string op;
  std::vector<uint32_t> args;  // value indices
};

struct ProgramModel {
  uint32_t version = 1;
  std::vector<Symbol> symbols;
  std::string name;
  std::string metadata_json = "{}";
  std::vector<ValueModel> values;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
  std::vector<InstructionModel> instructions;
};

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_PROGRAM_MODEL_H
