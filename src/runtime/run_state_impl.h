// What one run state holds: the activation arena (with the program's state
// tensors in it), its own tensors and values, the sizes of its dynamic
// tensors, the per-run-state parts of prepared kernels, a thread pool, and
// for every instruction a pre-resolved call, so a run is a loop of
// indirect calls.
#ifndef ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H
#define ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H

#include <pthreadpool.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/kernel_context.h"
#include "et_ops/program.h"
#include "runtime/program_impl.h"

namespace et_ops {

// Hidden: the nested type would otherwise inherit ET_OPS_API from RunState.
struct __attribute__((visibility("hidden"))) RunState::Impl {
  struct Call {
    et_ops_kernel_fn fn;
    et_ops_prepared_run_fn run;  // prepared kernels: called instead of fn
    const void* prepared;
    void* instance;
    et_ops_value* const* args;
    std::size_t arg_count;
  };
  struct FreeDeleter {
    void operator()(void* p) const { std::free(p); }
  };
  struct PoolDeleter {
    void operator()(pthreadpool_t p) const { pthreadpool_destroy(p); }
  };

  explicit Impl(const Program::Impl& program);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // Timings (when not null) get one entry per instruction that ran.
  RunResult execute(std::vector<InstructionTiming>* timings);
  Status set_threads(std::size_t count);
  Status resize_input(std::size_t i, const std::vector<int64_t>& sizes);
  void reset_state();

  const Program::Impl* program;
  std::unique_ptr<uint8_t, FreeDeleter> arena;
  std::vector<et_ops_tensor> tensors;  // one per tensor slot of the program
  runtime::LinkedArguments arguments;
  std::vector<Call> calls;
  std::vector<et_ops_tensor*> inputs;
  std::vector<const et_ops_tensor*> outputs;
  std::unique_ptr<pthreadpool, PoolDeleter> pool;  // null for one thread
  et_ops_run_environment environment{sizeof(et_ops_run_environment), 1, nullptr};
  KernelContext context;
  // Dynamic shapes: every dynamic tensor's sizes then strides, back to back
  // (never reallocated: tensors point into it), the elements of symbolic
  // int_lists, and the symbols' values of the current run.
  std::vector<int64_t> dynamic_dims;
  std::vector<int64_t> dynamic_lists;
  std::vector<int64_t> symbol_values;
  std::vector<int64_t*> input_sizes;  // per input: its sizes in dynamic_dims, null when static

 private:
  void place_tensors();
  void link_calls();
  void release_instances();
  void link_inputs_outputs();
  void link_dynamic_shapes();
  Status bind_symbols();
  void evaluate_symbolic();
  void call(const Call& c, et_ops_kernel_context* raw) const {
    if (c.run != nullptr) c.run(raw, c.prepared, c.instance, &environment, c.args, c.arg_count);
    else c.fn(raw, c.args, c.arg_count);
  }
  RunResult failure(std::size_t instruction);
};

}  // namespace et_ops

#endif  // ET_OPS_SRC_RUNTIME_RUN_STATE_IMPL_H
