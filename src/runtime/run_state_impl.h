// What one run state holds: the activation arena, its own tensors and
// values, and for every instruction a pre-resolved call (function plus a
// pointer to its argument array), so a run is a loop of indirect calls.
#ifndef ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H
#define ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H

#include <cstdlib>
#include <memory>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/kernel_context.h"
#include "et_ops/program.h"

namespace et_ops {

// Hidden: the nested type would otherwise inherit ET_OPS_API from RunState.
struct __attribute__((visibility("hidden"))) RunState::Impl {
  struct Call {
    et_ops_kernel_fn fn;
    et_ops_value* const* args;
    std::size_t arg_count;
  };
  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };

  explicit Impl(const Program::Impl& program);

  RunResult execute();

  const Program::Impl* program;
  std::unique_ptr<uint8_t, FreeDeleter> arena;
  std::vector<et_ops_tensor> tensors;  // one per tensor slot of the program
  std::vector<et_ops_value> values;
  std::vector<et_ops_tensor*> list_elements;  // the elements of every tensor_list value, one after another
  std::vector<et_ops_value*> arg_pointers;
  std::vector<Call> calls;
  std::vector<et_ops_tensor*> inputs;
  std::vector<const et_ops_tensor*> outputs;
  KernelContext context;

 private:
  void place_tensors();
  void link_values();
  et_ops_tensor* tensor_of(uint32_t value);
  void link_calls();
  void link_inputs_outputs();
  RunResult failure(std::size_t instruction);
};

}  // namespace et_ops

#endif  // ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H
