// aten::view_copy.out, aten::permute_copy.out and aten::slice_copy.Tensor_out:
// element copies for every dtype (bytes are moved, never converted), in any
// dense layout.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Shape;

bool check_list(KernelContext& ctx, const char* op, const char* name, IntList list) {
  if (!detail::check_int_list(ctx, op, name, list)) return false;
  if (list.size() > ET_OPS_MAX_DIMS)
    return detail::fail(ctx, op, "{} has {} entries; at most {} dimensions are supported", name, list.size(),
                        ET_OPS_MAX_DIMS);
  return true;
}

// The shape `size` asks for, with its one -1 (if any) inferred from numel,
// as aten's infer_size.
bool resolve_view_shape(KernelContext& ctx, IntList size, int64_t numel, Shape& shape) {
  const char* op = op_name::view_copy_out;
  if (!check_list(ctx, op, "size", size)) return false;
  int64_t inferred = -1;
  int64_t known = 1;
  shape.dim = size.size();
  for (int64_t i = 0; i < size.size(); ++i) {
    const int64_t value = size[i];
    shape.sizes[i] = value;
    if (value == -1) {
      if (inferred >= 0) return detail::fail(ctx, op, "size {} has more than one -1", detail::list_string(size));
      inferred = i;
      continue;
    }
    if (value < 0)
      return detail::fail(ctx, op, "size {} has an invalid entry {} at index {}", detail::list_string(size), value, i);
    if (value > 1 && known > INT64_MAX / value)
      return detail::fail(ctx, op, "size {} has a product that overflows", detail::list_string(size));
    known *= value;
  }
  if (inferred < 0) {
    if (known == numel) return true;
    return detail::fail(ctx, op, "size {} holds {} elements, but self has {}", detail::list_string(size), known,
                        numel);
  }
  if (known == 0)
    return detail::fail(ctx, op, "size {} is ambiguous: the -1 could be any value when the other sizes multiply to 0",
                        detail::list_string(size));
  if (numel % known != 0)
    return detail::fail(ctx, op, "size {} is invalid for self with {} elements", detail::list_string(size), numel);
  shape.sizes[inferred] = numel / known;
  return true;
}

// Copies self into out element by element in logical (row-major) order;
// the two may have different shapes of equal numel.
template <std::size_t N>
void copy_logical(TensorRef self, TensorRef out) {
  const auto* src = static_cast<const unsigned char*>(self.data());
  auto* dst = static_cast<unsigned char*>(out.data());
  detail::LogicalCursor from(self);
  detail::LogicalCursor to(out);
  for (int64_t i = 0; i < self.numel(); ++i) {
    std::memcpy(dst + to.offset() * N, src + from.offset() * N, N);
    from.next();
    to.next();
  }
}

// The permutation `dims` describes, each entry wrapped into [0, rank).
bool resolve_permutation(KernelContext& ctx, TensorRef self, IntList dims, int64_t* permutation) {
  const char* op = op_name::permute_copy_out;
  if (!check_list(ctx, op, "dims", dims)) return false;
  if (dims.size() != self.dim())
    return detail::fail(ctx, op, "dims {} has {} entries, but self is {}-D", detail::list_string(dims), dims.size(),
                        self.dim());
  bool seen[ET_OPS_MAX_DIMS] = {};
  for (int64_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < -self.dim() || dims[i] >= self.dim())
      return detail::fail(ctx, op, "dims {} has entry {} out of range for a {}-D self", detail::list_string(dims),
                          dims[i], self.dim());
    permutation[i] = dims[i] < 0 ? dims[i] + self.dim() : dims[i];
    if (seen[permutation[i]])
      return detail::fail(ctx, op, "dims {} repeats dimension {}", detail::list_string(dims), permutation[i]);
    seen[permutation[i]] = true;
  }
  return true;
}

// The elements a slice keeps along its dimension: the first and how many,
// with start and end as aten's slice resolves them (negative values count
// from the end, then both are clamped to [0, size], an end before the
// start keeps nothing).
struct SliceRange {
  int64_t start = 0;
  int64_t count = 0;
};

SliceRange resolve_slice(int64_t size, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step) {
  int64_t first = start.value_or(0);
  int64_t last = end.value_or(std::numeric_limits<int64_t>::max());
  if (first < 0) first += size;
  if (last < 0) last += size;
  first = std::clamp<int64_t>(first, 0, size);
  last = std::clamp<int64_t>(last, first, size);
  const int64_t length = last - first;
  return SliceRange{first, length == 0 ? 0 : (length - 1) / step + 1};
}

}  // namespace

bool view_copy_out(KernelContext& ctx, TensorRef self, IntList size, TensorRef out) {
  const char* op = op_name::view_copy_out;
  Shape shape;
  const bool valid = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                     detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                     resolve_view_shape(ctx, size, self.numel(), shape) &&
                     detail::check_out_shape(ctx, op, "out", out, shape, "size, with -1 inferred");
  if (!valid) return false;
  const bool both_contiguous = self.is_contiguous() && out.is_contiguous();
  // Contiguous memory is logical order: one memmove, which also makes
  // out == self (same data) a harmless no-op.
  if (both_contiguous && (!detail::overlaps(out, self) || out.data() == self.data())) {
    if (self.numel() > 0) std::memmove(out.data(), self.data(), self.nbytes());
    return ctx.ok();
  }
  if (!detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden)) return false;
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size_tag) { copy_logical<decltype(size_tag)::value>(self, out); });
  return ctx.ok();
}

bool permute_copy_out(KernelContext& ctx, TensorRef self, IntList dims, TensorRef out) {
  const char* op = op_name::permute_copy_out;
  int64_t permutation[ET_OPS_MAX_DIMS] = {};
  const bool structure_ok = detail::check_tensor(ctx, op, "self", self) &&
                            detail::check_tensor(ctx, op, "out", out) &&
                            detail::check_same_dtype(ctx, op, "out", out, "self", self) &&
                            resolve_permutation(ctx, self, dims, permutation);
  if (!structure_ok) return false;
  detail::StridedLoop<2> loop;
  Shape shape;
  shape.dim = loop.dim = self.dim();
  for (int64_t i = 0; i < self.dim(); ++i) {
    shape.sizes[i] = loop.sizes[i] = self.size(permutation[i]);
    loop.strides[0][i] = out.dim() == self.dim() ? out.stride(i) : 0;
    loop.strides[1][i] = self.stride(permutation[i]);
  }
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's sizes in the order of dims") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  loop.coalesce();
  detail::dispatch_element_size(dtype_size(self.dtype()),
                        [&](auto size_tag) { detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), self.data()); });
  return ctx.ok();
}

bool slice_copy_out(KernelContext& ctx, TensorRef self, int64_t dim, std::optional<int64_t> start,
                    std::optional<int64_t> end, int64_t step, TensorRef out) {
  const char* op = op_name::slice_copy_out;
  int64_t wrapped = 0;
  const bool args_ok = detail::check_tensor(ctx, op, "self", self) && detail::check_tensor(ctx, op, "out", out) &&
                       detail::check_same_dtype(ctx, op, "out", out, "self", self);
  if (!args_ok) return false;
  if (self.dim() == 0) return detail::fail(ctx, op, "self is 0-dim; a slice needs a dimension to slice");
  if (!detail::wrap_dim(ctx, op, "dim", dim, self.dim(), wrapped)) return false;
  if (step <= 0) return detail::fail(ctx, op, "step = {} must be positive", step);
  const SliceRange range = resolve_slice(self.size(wrapped), start, end, step);
  Shape shape = detail::shape_of(self);
  shape.sizes[wrapped] = range.count;
  const bool valid = detail::check_out_shape(ctx, op, "out", out, shape, "self's shape with the sliced length") &&
                     detail::check_no_overlap(ctx, op, "out", out, "self", self, detail::Alias::Forbidden);
  if (!valid) return false;
  if (out.numel() == 0) return true;
  detail::StridedLoop<2> loop;
  loop.dim = self.dim();
  for (int64_t d = 0; d < self.dim(); ++d) {
    loop.sizes[d] = shape.sizes[d];
    loop.strides[0][d] = out.stride(d);
    loop.strides[1][d] = self.stride(d);
  }
  // With two or more elements kept, step < size, so the product fits; with
  // fewer the stride is never stepped.
  loop.strides[1][wrapped] = range.count > 1 ? self.stride(wrapped) * step : 0;
  loop.coalesce();
  const std::size_t element = dtype_size(self.dtype());
  const auto* first =
      static_cast<const unsigned char*>(self.data()) + range.start * self.stride(wrapped) * static_cast<int64_t>(element);
  detail::dispatch_element_size(element, [&](auto size_tag) {
    detail::copy_strided<decltype(size_tag)::value>(loop, out.data(), first);
  });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
