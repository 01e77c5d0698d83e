// aten::cat.out: the tensors joined along one dimension, for every dtype
// (elements are moved as bytes), in any dense layouts.
#include <fmt/format.h>

#include <cstdint>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Shape;

// "tensors[i]", for messages, without allocating.
struct ElementName {
  explicit ElementName(int64_t i) {
    const auto end = fmt::format_to_n(text, sizeof text - 1, "tensors[{}]", i).out;
    *end = '\0';
  }
  char text[32] = {};
};

// aten skips 1-D tensors of size 0 (the legacy empty tensor) whatever dim is.
bool skipped(TensorRef t) { return t.dim() == 1 && t.size(0) == 0; }

// Every tensor sound and of out's dtype; the rest (all but skipped ones)
// of one rank, equal in every dimension but `dim`; out of the joined shape.
bool resolve_shape(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out, int64_t& wrapped,
                   Shape& shape) {
  const char* op = op_name::cat_out;
  if (tensors.empty()) return detail::fail(ctx, op, "tensors is empty; cat needs at least one tensor");
  int64_t first = -1;
  for (int64_t i = 0; i < tensors.size(); ++i) {
    const ElementName name(i);
    if (!(detail::check_tensor(ctx, op, name.text, tensors[i]) &&
          detail::check_same_dtype(ctx, op, name.text, tensors[i], "out", out)))
      return false;
    if (tensors[i].dim() == 0)
      return detail::fail(ctx, op, "{} is 0-dim; 0-dim tensors cannot be joined", name.text);
    if (first < 0 && !skipped(tensors[i])) first = i;
  }
  if (first < 0) {  // nothing but legacy empty tensors: the result is one too, whatever dim
    shape.dim = 1;
    shape.sizes[0] = 0;
    wrapped = 0;
    return true;
  }
  const TensorRef reference = tensors[first];
  if (!detail::wrap_dim(ctx, op, "dim", dim, reference.dim(), wrapped)) return false;
  shape = detail::shape_of(reference);
  shape.sizes[wrapped] = 0;
  for (int64_t i = 0; i < tensors.size(); ++i) {
    const TensorRef t = tensors[i];
    if (skipped(t)) continue;
    if (t.dim() != reference.dim())
      return detail::fail(ctx, op, "tensors[{}] is {}-D, but tensors[{}] is {}-D; all must have one rank", i, t.dim(),
                          first, reference.dim());
    for (int64_t d = 0; d < t.dim(); ++d)
      if (d != wrapped && t.size(d) != reference.size(d))
        return detail::fail(ctx, op, "tensors[{}] has shape {} and tensors[{}] {}: sizes must match except in "
                            "dimension {}", i, detail::shape_string(t), first, detail::shape_string(reference),
                            wrapped);
    if (__builtin_add_overflow(shape.sizes[wrapped], t.size(wrapped), &shape.sizes[wrapped]))
      return detail::fail(ctx, op, "the joined size of dimension {} overflows", wrapped);
  }
  return true;
}

bool check_no_overlap(KernelContext& ctx, TensorList tensors, TensorRef out) {
  for (int64_t i = 0; i < tensors.size(); ++i) {
    const ElementName name(i);
    if (!detail::check_no_overlap(ctx, op_name::cat_out, "out", out, name.text, tensors[i], detail::Alias::Forbidden))
      return false;
  }
  return true;
}

// Copies t into out at `offset` along `dim`.
template <std::size_t N>
void place(TensorRef t, int64_t dim, int64_t offset, TensorRef out) {
  if (t.numel() == 0) return;
  detail::StridedLoop<2> loop;
  loop.dim = t.dim();
  for (int64_t d = 0; d < t.dim(); ++d) {
    loop.sizes[d] = t.size(d);
    loop.strides[0][d] = out.stride(d);
    loop.strides[1][d] = t.stride(d);
  }
  loop.coalesce();
  auto* destination = static_cast<unsigned char*>(out.data()) + offset * out.stride(dim) * static_cast<int64_t>(N);
  detail::copy_strided<N>(loop, destination, t.data());
}

}  // namespace

bool cat_out(KernelContext& ctx, TensorList tensors, int64_t dim, TensorRef out) {
  const char* op = op_name::cat_out;
  int64_t wrapped = 0;
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "out", out) &&
                     resolve_shape(ctx, tensors, dim, out, wrapped, shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape,
                                             "the tensors' shape with their sizes in dim added") &&
                     check_no_overlap(ctx, tensors, out);
  if (!valid) return false;
  detail::dispatch_element_size(dtype_size(out.dtype()), [&](auto size_tag) {
    int64_t offset = 0;
    for (int64_t i = 0; i < tensors.size(); ++i) {
      if (skipped(tensors[i])) continue;
      place<decltype(size_tag)::value>(tensors[i], wrapped, offset, out);
      offset += tensors[i].size(wrapped);
    }
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
