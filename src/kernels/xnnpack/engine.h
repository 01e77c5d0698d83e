// What every kernel of the XNNPACK set shares: starting XNNPACK, the checks
// of quantized arguments (each naming the operator, the argument and the
// value), and the per-run-state operator that runs an XNNPACK operator
// with the run state's thread pool.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_H
#define ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_H

#include <xnnpack.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "common/tensor_checks.h"
#include "et_ops/kernel_library.h"

namespace et_ops::kernels::xnnpack::detail {

using kernels::detail::check_dtype;
using kernels::detail::check_tensor;
using kernels::detail::fail;
using kernels::detail::shape_string;

// Starts XNNPACK once per process; false (reported) when it cannot start.
bool initialize(KernelContext& ctx, const char* op);

// Whether convolutions may run on oneDNN: not when ET_OPS_XNNPACK_ONEDNN
// is 0 (tests compare every other path with XNNPACK's alone).
bool onednn_allowed();

// Reports a failed XNNPACK call, naming what was asked of it.
bool check_status(KernelContext& ctx, const char* op, xnn_status status, const char* call);

// A scale is finite, positive and a normal float32 (XNNPACK computes in float32).
bool check_scale(KernelContext& ctx, const char* op, const char* name, double scale);
// A zero point of an int8 tensor lies in [-128, 127].
bool check_zero_point(KernelContext& ctx, const char* op, const char* name, int64_t zero_point);
// The clamp of the output, in quantized units: -128 <= min < max <= 127.
bool check_output_range(KernelContext& ctx, const char* op, int64_t output_min, int64_t output_max);

// An int8 activation of `rank` dimensions, every size positive; its data is
// not looked at (at load time it has none).
bool check_activation(KernelContext& ctx, const char* op, const char* name, TensorRef t, int64_t rank);
// A 4-dim [N, C, H, W] tensor whose memory is channels-last (N, H, W, C),
// the layout XNNPACK reads and writes (dim_order [0, 2, 3, 1]).
bool check_channels_last(KernelContext& ctx, const char* op, const char* name, TensorRef t);
// Tensors of an elementwise operator (`names` and `tensors`, the first the
// one the others are compared with): int8, not empty, the same sizes and one
// dense layout, so the operator runs over memory order.
bool check_elementwise(KernelContext& ctx, const char* op, std::initializer_list<const char*> names,
                       std::initializer_list<TensorRef> tensors);
// Whether t's memory is dense in the dim order `order` (outermost first),
// ignoring dimensions of size 1.
bool has_dim_order(TensorRef t, const int64_t* order);
// t's dimensions of size above 1, outermost first in memory (by stride).
std::vector<int64_t> memory_order(TensorRef t);
// Every dimension of t, outermost first: its dimensions of size 1 or 0
// (whose strides say nothing, and which move no element) by index, then
// memory_order(t).
std::vector<int64_t> dim_order_of(TensorRef t);
// Operands of a broadcasting binary operator: self, other and out int8, not
// empty, of out's rank (at most `max_rank`), each dimension out's size or 1,
// out every size the larger of the operands'; out dense, and self and other
// dense (in out's dim order when `same_dim_order`).
bool check_broadcast(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out,
                     int64_t max_rank, bool same_dim_order);
// A tensor whose elements are contiguous in memory (row-major).
bool check_row_major(KernelContext& ctx, const char* op, const char* name, TensorRef t);
// A constant of the program (it has data when the kernel is prepared).
bool check_constant(KernelContext& ctx, const char* op, const char* name, TensorRef t);
// The output has exactly `sizes`.
bool check_output_sizes(KernelContext& ctx, const char* op, TensorRef out, const int64_t* sizes, int64_t rank);

struct OperatorDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using OperatorHandle = std::unique_ptr<xnn_operator, OperatorDeleter>;

// One run state's XNNPACK operator (operators are mutable: each run state
// has its own), and what it was last set up with: it is set up again only
// when the data or the thread pool changes.
class RunStateOperator {
 public:
  explicit RunStateOperator(xnn_operator_t op) : op_(op) {}
  // Runs the operator on the run state's pool; setup(op, pool) sets it up
  // for the given data pointers first when they differ from the last run's.
  template <typename Setup>
  bool run(KernelContext& ctx, const char* op, const RunEnvironment& env, const void* input, const void* other,
           void* output, Setup setup) {
    auto* pool = static_cast<pthreadpool_t>(env.threadpool);
    if (!set_up_ || input != input_ || other != other_ || output != output_ || pool != pool_) {
      if (!check_status(ctx, op, setup(op_.get(), pool), "setup")) return false;
      set_up_ = true;
      input_ = input, other_ = other, output_ = output, pool_ = pool;
    }
    return check_status(ctx, op, xnn_run_operator(op_.get(), pool), "xnn_run_operator");
  }
  // The next run sets the operator up whatever its pointers (after a run
  // set up for other shapes).
  void forget_setup() { set_up_ = false; }

 private:
  OperatorHandle op_;
  bool set_up_ = false;
  const void* input_ = nullptr;
  const void* other_ = nullptr;
  void* output_ = nullptr;
  pthreadpool_t pool_ = nullptr;
};

// An operator made by create(&op) (an xnn_create_* call), or null (reported).
template <typename Create>
std::unique_ptr<RunStateOperator> create_operator(KernelContext& ctx, const char* op, const char* call,
                                                  Create create) {
  xnn_operator_t made = nullptr;
  if (!check_status(ctx, op, create(&made), call)) return nullptr;
  return std::make_unique<RunStateOperator>(made);
}

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_H
