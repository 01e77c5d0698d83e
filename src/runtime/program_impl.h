// What a loaded program holds: the mapped file, the validated model, the
// tensor prototypes every run state copies, resolved instructions and the
// memory plan. Immutable once Program::load returns.
#ifndef ET_OPS_SRC_RUNTIME_PROGRAM_IMPL_H
#define ET_OPS_SRC_RUNTIME_PROGRAM_IMPL_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/program.h"
#include "runtime/library_pins.h"
#include "runtime/mapped_file.h"
#include "runtime/prepared_kernels.h"
#include "runtime/program_model.h"

namespace et_ops {

// Hidden: the nested type would otherwise inherit ET_OPS_API from Program.
struct __attribute__((visibility("hidden"))) Program::Impl {
  // A tensor value as every run state starts it: metadata pointing into
  // `model`, data pointing at the mapped constant (or null until a state
  // places it in its arena).
  struct TensorSlot {
    uint32_t value = 0;
    et_ops_tensor prototype{};
    uint64_t arena_offset = 0;
    bool constant = false;
  };

  // A state tensor: where each run state's copy starts from (and reset()
  // restores it from).
  struct StateTensor {
    std::size_t slot = 0;
    const uint8_t* initial = nullptr;  // in the mapped data segment
    std::size_t nbytes = 0;
  };

  // A tensor with symbolic sizes: each run state evaluates them into its
  // own sizes and strides before a run.
  struct DynamicTensor {
    std::size_t slot = 0;
    uint32_t value = 0;
  };

  // Where a run binds a symbol: input `input`'s dimension `dim` is `size`.
  struct SymbolSource {
    std::size_t input = 0;
    std::size_t dim = 0;
    SymbolicInt size;
  };

  struct Instruction {
    et_ops_kernel_fn fn = nullptr;
    const et_ops_prepared_kernel* prepared = nullptr;  // a prepared kernel's functions, else nullptr
    const void* prepared_state = nullptr;               // what its prepare made (owned by prepared_states)
    std::size_t first_arg = 0;  // into arg_values
    std::size_t arg_count = 0;
  };

  // A non-tensor output, seen as a tensor over the program's own payload.
  struct ValueAsTensor {
    TensorSpec spec;
    std::vector<int64_t> strides;
    et_ops_tensor tensor{};
  };

  std::string path;
  runtime::MappedFile file;
  runtime::ProgramModel model;

  std::vector<et_ops_value> value_templates;  // non-tensor payloads; tensor pointers are per state
  std::vector<int32_t> slot_of_value;         // tensor slot index, -1 for other values
  std::vector<TensorSlot> tensor_slots;
  std::vector<Instruction> instructions;
  std::vector<uint32_t> arg_values;  // every instruction's arguments, back to back
  std::vector<std::string> operators;  // unique, order of first use
  std::vector<TensorSpec> input_specs;
  std::vector<TensorSpec> output_specs;
  std::vector<ValueAsTensor> non_tensor_outputs;  // one per output; used where the output is not a tensor
  uint64_t planned_bytes = 0;
  uint64_t peak_live_bytes = 0;  // MemoryPlan::peak_live_bytes
  std::vector<StateTensor> state_tensors;
  std::vector<DynamicTensor> dynamic_tensors;
  std::vector<uint32_t> dynamic_values;  // int and int_list values with symbolic entries
  std::vector<SymbolSource> symbol_sources;  // in input order, then dimension order
  runtime::LibraryPins pins;
  // Declared after the pins, so destroyed first: their release functions
  // live in the pinned libraries.
  runtime::PreparedStates prepared_states;
};

namespace runtime {

// Maps, validates and plans the program at `path`; operators stay
// unresolved. Throws FileError or FormatError (naming the file).
std::unique_ptr<Program::Impl> build_program(const std::string& path, const LoadLimits& limits);

// Resolves every instruction's kernel in the registry (and pins the
// libraries that hold them). Returns the operators that could not be resolved, in
// order of first use.
std::vector<std::string> resolve_operators(Program::Impl& program);

// Runs the prepare function of every prepared kernel (after
// resolve_operators found them all). Throws FormatError naming the
// instruction and the kernel's message when one fails.
void prepare_kernels(Program::Impl& program);

// The arguments of every instruction over a set of tensors (one per tensor
// slot): values, tensor-list elements and argument pointers, as a run state
// or the load-time preparation needs them.
struct LinkedArguments {
  std::vector<et_ops_value> values;
  std::vector<et_ops_tensor*> list_elements;
  std::vector<et_ops_value*> arg_pointers;
  void link(const Program::Impl& program, std::vector<et_ops_tensor>& tensors);
  et_ops_value* const* of(const Program::Impl::Instruction& instruction) const {
    return arg_pointers.data() + instruction.first_arg;
  }
};
}  // namespace runtime
}  // namespace et_ops

#endif  // ET_OPS_SRC_RUNTIME_PROGRAM_IMPL_H
