// et_xnnpack::cat.out: int8 concatenation of tensors that share out's
// quantization and dim order (the inputs of an inception block's cat):
// exact, a copy of blocks. Along channels of channels-last tensors each
// pixel's channels of every input are copied in turn.
#include <algorithm>
#include <cstring>

#include "kernels.h"

namespace et_ops::kernels::xnnpack {
namespace {

bool check_cat_tensors(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out, int64_t& wrapped) {
  using namespace detail;
  const char* op = op_name::cat_kernel;
  if (out.dim() == 0 || out.dim() > ET_OPS_MAX_DIMS)
    return fail(ctx, op, "out must have 1 to {} dimensions, got {}", ET_OPS_MAX_DIMS, out.dim());
  if (!check_activation(ctx, op, "out", out, out.dim())) return false;
  if (!kernels::detail::is_dense(out))
    return fail(ctx, op, "out has strides {}, not a dense layout of sizes {}",
                kernels::detail::list_string(out.strides(), out.dim()), shape_string(out));
  if (dim < -out.dim() || dim >= out.dim())
    return fail(ctx, op, "dim {} is out of range for {} dimensions", dim, out.dim());
  wrapped = dim < 0 ? dim + out.dim() : dim;
  if (tensors.empty()) return fail(ctx, op, "tensors is empty; cat needs at least one tensor");
  const std::vector<int64_t> order = dim_order_of(out);
  int64_t joined = 0;
  for (int64_t i = 0; i < tensors.size(); ++i) {
    const TensorRef t = tensors[i];
    const std::string name = fmt::format("tensors[{}]", i);
    if (!check_activation(ctx, op, name.c_str(), t, out.dim())) return false;
    for (int64_t d = 0; d < out.dim(); ++d)
      if (d != wrapped && t.size(d) != out.size(d))
        return fail(ctx, op, "{} has sizes {} and out {}: they must match but in dimension {}", name, shape_string(t),
                    shape_string(out), wrapped);
    if (!has_dim_order(t, order.data()))
      return fail(ctx, op, "{} has strides {}, not out's dim order (out's strides {})", name,
                  kernels::detail::list_string(t.strides(), t.dim()), kernels::detail::list_string(out.strides(), out.dim()));
    joined += t.size(wrapped);
  }
  if (joined != out.size(wrapped))
    return fail(ctx, op, "out has {} elements in dimension {}, the tensors {} together", out.size(wrapped), wrapped, joined);
  return true;
}

}  // namespace

std::unique_ptr<CatState> cat_prepare(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out) {
  int64_t wrapped = 0;
  if (!check_cat_tensors(ctx, tensors, dim, out, wrapped)) return nullptr;
  const std::vector<int64_t> order = detail::dim_order_of(out);
  const auto position = std::find(order.begin(), order.end(), wrapped) - order.begin();
  auto state = std::make_unique<CatState>();
  // The dimensions before `dim` in memory make the steps; those after, each block.
  int64_t inner = 1;
  for (int64_t i = 0; i < out.dim(); ++i) {
    const int64_t size = out.size(order[std::size_t(i)]);
    if (i < position) state->outer *= size;
    if (i > position) inner *= size;
  }
  for (int64_t i = 0; i < tensors.size(); ++i) {
    state->block_bytes.push_back(tensors[i].size(wrapped) * inner);
    state->numels.push_back(tensors[i].numel());
  }
  state->out_numel = out.numel();
  return state;
}

bool cat_run(KernelContext& ctx, const CatState& s, const RunEnvironment&, TensorList tensors, int64_t, TensorRef out) {
  bool same = tensors.size() == int64_t(s.numels.size()) && out.numel() == s.out_numel && out.data() != nullptr;
  for (int64_t i = 0; same && i < tensors.size(); ++i)
    same = tensors[i].numel() == s.numels[std::size_t(i)] && tensors[i].data() != nullptr;
  if (!same) return detail::fail(ctx, op_name::cat_kernel, "the run's tensors are not those the kernel was prepared for");
  auto* to = out.data_as<int8_t>();
  for (int64_t o = 0; o < s.outer; ++o)
    for (int64_t i = 0; i < tensors.size(); ++i) {
      const int64_t block = s.block_bytes[std::size_t(i)];
      std::memmove(to, tensors[i].data_as<const int8_t>() + o * block, std::size_t(block));
      to += block;
    }
  return true;
}

}  // namespace et_ops::kernels::xnnpack
