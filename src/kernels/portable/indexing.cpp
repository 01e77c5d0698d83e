// Gathers and scatters by integer index tensors: aten::embedding.out,
// index.Tensor_out, index_select.out, index_put.out and index_copy.out, for
// every dtype of self (elements are moved, never converted; index_put with
// accumulate adds in self's dtype). Index tensors are int64 or int32. Every
// index is checked before anything is written, so a call that fails leaves
// out as it was, and one whose out is self (a program's state) writes only
// the indexed elements. Negative indices wrap where PyTorch wraps them
// (index, index_put); embedding, index_select and index_copy refuse them,
// as PyTorch's CPU kernels do.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/portable.h"

namespace et_ops::kernels::portable {
namespace {

using detail::Alias;
using detail::Shape;


// ---- index tensors ----

bool check_index_tensor(KernelContext& ctx, const char* op, const char* name, TensorRef index) {
  if (!detail::check_tensor(ctx, op, name, index)) return false;
  if (index.dtype() == DType::Int64 || index.dtype() == DType::Int32) return true;
  return detail::fail(ctx, op, "{} has dtype {}; index tensors must be int64 or int32", name,
                      dtype_name(index.dtype()));
}

// The index at memory offset `at` of an int64 or int32 tensor.
int64_t index_at(TensorRef index, int64_t at) {
  if (index.dtype() == DType::Int32) return index.data_as<const int32_t>()[at];
  return index.data_as<const int64_t>()[at];
}

int64_t wrapped(int64_t value, int64_t size) { return value < 0 ? value + size : value; }

// Every element of `index` (named `name`) must address dimension `dim` of
// size `size`: [-size, size) when negatives wrap, else [0, size).
bool check_indices(KernelContext& ctx, const char* op, const char* name, TensorRef index, int64_t dim, int64_t size,
                   bool negatives_wrap) {
  const int64_t low = negatives_wrap ? -size : 0;
  detail::LogicalCursor cursor(index);
  for (int64_t i = 0; i < index.numel(); ++i, cursor.next()) {
    const int64_t value = index_at(index, cursor.offset());
    if (value < low || value >= size)
      return detail::fail(ctx, op, "{} holds index {} at position {}, out of range for dimension {} of size {} "
                          "(expected [{}, {}])", name, value, i, dim, size, low, size - 1);
  }
  return true;
}

// Copies src into out (same shape) unless out is src: the untouched part
// of an index_put or index_copy whose out is not self.
bool copy_unless_same(KernelContext& ctx, const char* op, TensorRef self, TensorRef out) {
  if (detail::is_exact_alias(out, self)) return true;
  if (!detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed)) return false;
  const TensorRef operands[2] = {out, self};
  const auto loop = detail::broadcast_loop(detail::shape_of(out), operands);
  detail::dispatch_element_size(dtype_size(out.dtype()), [&](auto size) {
    detail::copy_strided<decltype(size)::value>(loop, out.data(), self.data());
  });
  return true;
}

// ---- advanced indexing (index, index_put) ----

// Where the elements of self[indices] come from. The result's dimensions
// are self's, with the indexed ones replaced by the broadcast shape of the
// index tensors: in place when the indexed dimensions are adjacent, else
// first (PyTorch's rule).
struct AdvancedIndex {
  Shape result;
  int64_t tensor_count = 0;
  int64_t dims[ET_OPS_MAX_DIMS] = {};  // the self dimension each index tensor indexes
  const et_ops_tensor* tensors[ET_OPS_MAX_DIMS] = {};
  TensorRef tensor(int64_t t) const { return TensorRef(*tensors[t]); }
  // Per result dimension: self's stride there (0 for a broadcast dimension)
  // and each index tensor's (0 where it broadcasts or for self's dimensions).
  int64_t self_strides[ET_OPS_MAX_DIMS] = {};
  int64_t index_strides[ET_OPS_MAX_DIMS][ET_OPS_MAX_DIMS] = {};
};

bool resolve_advanced_index(KernelContext& ctx, const char* op, TensorRef self, OptionalTensorList indices,
                            AdvancedIndex& a) {
  if (indices.size() < 0 || (indices.size() > 0 && indices.raw().data == nullptr))
    return detail::fail(ctx, op, "indices is a malformed list");
  if (indices.size() > self.dim())
    return detail::fail(ctx, op, "indices has {} entries, more than self's {} dimensions (shape {})", indices.size(),
                        self.dim(), detail::shape_string(self));
  Shape broadcast;
  int64_t first = -1;
  int64_t last = -1;
  for (int64_t i = 0; i < indices.size(); ++i) {
    const std::optional<TensorRef> index = indices[i];
    if (!index) continue;
    const std::string name = fmt::format("indices[{}]", i);
    if (index->dtype() == DType::Bool || index->dtype() == DType::UInt8)
      return detail::fail(ctx, op, "{} is a {} mask; masks are not supported (masked_fill and where are)", name,
                          dtype_name(index->dtype()));
    if (!check_index_tensor(ctx, op, name.c_str(), *index) ||
        !check_indices(ctx, op, name.c_str(), *index, i, self.size(i), true))
      return false;
    Shape merged;
    merged.dim = broadcast.dim > index->dim() ? broadcast.dim : index->dim();
    for (int64_t k = 0; k < merged.dim; ++k) {
      const int64_t bd = broadcast.dim - merged.dim + k;
      const int64_t id = index->dim() - merged.dim + k;
      const int64_t b = bd >= 0 ? broadcast.sizes[bd] : 1;
      const int64_t s = id >= 0 ? index->size(id) : 1;
      if (b != s && b != 1 && s != 1)
        return detail::fail(ctx, op, "{} of shape {} cannot be broadcast with the earlier index tensors (shape {})", name,
                            detail::shape_string(*index), detail::shape_string(broadcast));
      merged.sizes[k] = b == 1 ? s : b;
    }
    broadcast = merged;
    a.dims[a.tensor_count] = i;
    a.tensors[a.tensor_count++] = &index->raw();
    if (first < 0) first = i;
    last = i;
  }
  if (a.tensor_count == 0) return detail::fail(ctx, op, "indices holds no tensor; at least one is needed");
  bool adjacent = true;
  for (int64_t i = first; i <= last; ++i) adjacent = adjacent && indices[i].has_value();
  const int64_t insert_at = adjacent ? first : 0;
  // Result dimensions: self's dimensions before insert_at that are not
  // indexed, the broadcast dimensions, then the other non-indexed ones.
  if (self.dim() - a.tensor_count + broadcast.dim > ET_OPS_MAX_DIMS)
    return detail::fail(ctx, op, "the result would have more than {} dimensions", ET_OPS_MAX_DIMS);
  const auto add_self_dim = [&](int64_t d) {
    a.result.sizes[a.result.dim] = self.size(d);
    a.self_strides[a.result.dim++] = self.stride(d);
  };
  const auto indexed = [&](int64_t d) { return d < indices.size() && indices[d].has_value(); };
  for (int64_t d = 0; d < insert_at; ++d)
    if (!indexed(d)) add_self_dim(d);
  for (int64_t k = 0; k < broadcast.dim; ++k) {
    const int64_t r = a.result.dim++;
    a.result.sizes[r] = broadcast.sizes[k];
    for (int64_t t = 0; t < a.tensor_count; ++t) {
      const TensorRef index = a.tensor(t);
      const int64_t id = index.dim() - broadcast.dim + k;
      a.index_strides[t][r] = id >= 0 && index.size(id) != 1 ? index.stride(id) : 0;
    }
  }
  for (int64_t d = insert_at; d < self.dim(); ++d)
    if (!indexed(d)) add_self_dim(d);
  return true;
}

// Calls f(result_offset_in(out-like tensor), self_offset) for every element
// of the result in logical order; `result_strides` are the strides of the
// tensor laid out like the result (out for index, values broadcast for
// index_put).
template <typename F>
void for_each_indexed(const AdvancedIndex& a, TensorRef self, const int64_t* result_strides, F&& f) {
  const Shape& shape = a.result;
  if (shape.numel() == 0) return;
  int64_t counter[ET_OPS_MAX_DIMS] = {};
  int64_t result_offset = 0;
  int64_t self_offset = 0;
  int64_t index_offsets[ET_OPS_MAX_DIMS] = {};
  for (int64_t n = shape.numel(); n > 0; --n) {
    int64_t source = self_offset;
    for (int64_t t = 0; t < a.tensor_count; ++t)
      source += wrapped(index_at(a.tensor(t), index_offsets[t]), self.size(a.dims[t])) * self.stride(a.dims[t]);
    f(result_offset, source);
    for (int64_t d = shape.dim - 1; d >= 0; --d) {
      ++counter[d];
      result_offset += result_strides[d];
      self_offset += a.self_strides[d];
      for (int64_t t = 0; t < a.tensor_count; ++t) index_offsets[t] += a.index_strides[t][d];
      if (counter[d] < shape.sizes[d]) break;
      result_offset -= counter[d] * result_strides[d];
      self_offset -= counter[d] * a.self_strides[d];
      for (int64_t t = 0; t < a.tensor_count; ++t) index_offsets[t] -= counter[d] * a.index_strides[t][d];
      counter[d] = 0;
    }
  }
}

// out[...] = values[...] (or +=) at the indexed positions.
template <typename T>
void put_values(const AdvancedIndex& a, TensorRef out, TensorRef values, bool accumulate) {
  int64_t value_strides[ET_OPS_MAX_DIMS] = {};
  detail::broadcast_strides(values, a.result, value_strides);
  T* o = out.data_as<T>();
  const T* v = values.data_as<const T>();
  for_each_indexed(a, out, value_strides, [&](int64_t from, int64_t to) {
    const T value = detail::load(v + from);
    if (!accumulate) o[to] = value;
    else if constexpr (std::is_same_v<T, bool>) o[to] = detail::load(o + to) || value;
    else if constexpr (std::is_floating_point_v<T>) o[to] += value;
    else o[to] = static_cast<T>(static_cast<uint64_t>(o[to]) + static_cast<uint64_t>(value));
  });
}

// ---- one dimension (index_select, index_copy, embedding) ----

// Copies slices: for each i < count, the slice of `to` at to_index(i)
// along to_dim receives the slice of `from` at from_index(i) along
// from_dim. The slices have the same shape (every other dimension).
template <typename ToIndex, typename FromIndex>
void copy_slices(TensorRef to, int64_t to_dim, TensorRef from, int64_t from_dim, int64_t count, ToIndex to_index,
                 FromIndex from_index) {
  detail::StridedLoop<2> slice;
  for (int64_t d = 0, e = 0; d < to.dim(); ++d) {
    if (d == to_dim) continue;
    if (e == from_dim) ++e;
    slice.sizes[slice.dim] = to.size(d);
    slice.strides[0][slice.dim] = to.stride(d);
    slice.strides[1][slice.dim++] = from.stride(e++);
  }
  slice.coalesce();
  const std::size_t element = dtype_size(to.dtype());
  auto* out = static_cast<unsigned char*>(to.data());
  const auto* in = static_cast<const unsigned char*>(from.data());
  const int64_t to_stride = to.dim() > 0 ? to.stride(to_dim) : 0;
  const int64_t from_stride = from.dim() > 0 ? from.stride(from_dim) : 0;
  detail::dispatch_element_size(element, [&](auto size) {
    constexpr std::size_t N = decltype(size)::value;
    for (int64_t i = 0; i < count; ++i)
      detail::copy_strided<N>(slice, out + to_index(i) * to_stride * static_cast<int64_t>(N),
                              in + from_index(i) * from_stride * static_cast<int64_t>(N));
  });
}

// The offset of the i-th element of a 0-D or 1-D index tensor.
int64_t nth_index(TensorRef index, int64_t i) { return index_at(index, index.dim() == 0 ? 0 : i * index.stride(0)); }

bool check_vector_index(KernelContext& ctx, const char* op, TensorRef index) {
  if (!check_index_tensor(ctx, op, "index", index)) return false;
  if (index.dim() <= 1) return true;
  return detail::fail(ctx, op, "index must be 0-D or 1-D, got shape {}", detail::shape_string(index));
}

}  // namespace

bool embedding_out(KernelContext& ctx, TensorRef weight, TensorRef indices, int64_t padding_idx,
                   bool scale_grad_by_freq, bool sparse, TensorRef out) {
  (void)padding_idx, (void)scale_grad_by_freq, (void)sparse;  // they only change gradients
  const char* op = op_name::embedding_out;
  if (!detail::check_tensor(ctx, op, "weight", weight) || !check_index_tensor(ctx, op, "indices", indices) ||
      !detail::check_tensor(ctx, op, "out", out) || !detail::check_rank(ctx, op, "weight", weight, 2) ||
      !detail::check_same_dtype(ctx, op, "out", out, "weight", weight))
    return false;
  if (indices.dim() + 1 > ET_OPS_MAX_DIMS)
    return detail::fail(ctx, op, "indices has {} dimensions; the result would have too many", indices.dim());
  Shape shape = detail::shape_of(indices);
  shape.sizes[shape.dim++] = weight.size(1);
  if (!detail::check_out_shape(ctx, op, "out", out, shape, "indices' shape, then weight.size(1)") ||
      !detail::check_no_overlap(ctx, op, "out", out, "weight", weight, Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "out", out, "indices", indices, Alias::Forbidden) ||
      !check_indices(ctx, op, "indices", indices, 0, weight.size(0), false))
    return false;
  // Row r of out (in logical order) is row indices[r] of weight.
  detail::LogicalCursor cursor(indices);
  const std::size_t element = dtype_size(weight.dtype());
  auto* o = static_cast<unsigned char*>(out.data());
  const auto* w = static_cast<const unsigned char*>(weight.data());
  detail::LogicalCursor out_rows(out);
  const int64_t columns = weight.size(1);
  for (int64_t r = 0; r < indices.numel(); ++r, cursor.next()) {
    const int64_t row = index_at(indices, cursor.offset());
    for (int64_t c = 0; c < columns; ++c, out_rows.next())
      std::memcpy(o + out_rows.offset() * static_cast<int64_t>(element),
                  w + (row * weight.stride(0) + c * weight.stride(1)) * static_cast<int64_t>(element), element);
  }
  return ctx.ok();
}

bool index_out(KernelContext& ctx, TensorRef self, OptionalTensorList indices, TensorRef out) {
  const char* op = op_name::index_out;
  AdvancedIndex a;
  if (!detail::check_tensor(ctx, op, "self", self) || !detail::check_tensor(ctx, op, "out", out) ||
      !detail::check_same_dtype(ctx, op, "out", out, "self", self) ||
      !resolve_advanced_index(ctx, op, self, indices, a) ||
      !detail::check_out_shape(ctx, op, "out", out, a.result, "self indexed by the broadcast index tensors") ||
      !detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden))
    return false;
  for (int64_t t = 0; t < a.tensor_count; ++t)
    if (!detail::check_no_overlap(ctx, op, "out", out, "an index tensor", a.tensor(t), Alias::Forbidden)) return false;
  if (a.tensor_count == 1 && a.tensor(0).dim() == 1) {
    // One vector of indices (a table indexed by positions): index_select's
    // copy of whole slices, instead of an element at a time.
    const TensorRef index = a.tensor(0);
    const int64_t d = a.dims[0];
    const int64_t size = self.size(d);
    if (out.numel() > 0)
      copy_slices(out, d, self, d, index.numel(), [](int64_t i) { return i; },
                  [&](int64_t i) { return wrapped(nth_index(index, i), size); });
    return ctx.ok();
  }
  int64_t out_strides[ET_OPS_MAX_DIMS] = {};
  for (int64_t d = 0; d < out.dim(); ++d) out_strides[d] = out.stride(d);
  detail::dispatch_element_size(dtype_size(self.dtype()), [&](auto size) {
    constexpr std::size_t N = decltype(size)::value;
    auto* o = static_cast<unsigned char*>(out.data());
    const auto* s = static_cast<const unsigned char*>(self.data());
    for_each_indexed(a, self, out_strides, [&](int64_t to, int64_t from) { std::memcpy(o + to * N, s + from * N, N); });
  });
  return ctx.ok();
}

bool index_put_out(KernelContext& ctx, TensorRef self, OptionalTensorList indices, TensorRef values, bool accumulate,
                   TensorRef out) {
  const char* op = op_name::index_put_out;
  AdvancedIndex a;
  if (!detail::check_tensor(ctx, op, "self", self) || !detail::check_tensor(ctx, op, "values", values) ||
      !detail::check_tensor(ctx, op, "out", out) || !detail::check_comparable_dtype(ctx, op, "self", self) ||
      !detail::check_same_dtype(ctx, op, "values", values, "self", self) ||
      !detail::check_same_dtype(ctx, op, "out", out, "self", self) ||
      !detail::check_out_shape(ctx, op, "out", out, detail::shape_of(self), "the shape of self") ||
      !resolve_advanced_index(ctx, op, self, indices, a) ||
      !detail::check_broadcastable_to(ctx, op, "values", values, a.result, "self indexed by indices") ||
      !detail::check_no_overlap(ctx, op, "out", out, "values", values, Alias::Forbidden))
    return false;
  for (int64_t t = 0; t < a.tensor_count; ++t)
    if (!detail::check_no_overlap(ctx, op, "out", out, "an index tensor", a.tensor(t), Alias::Forbidden)) return false;
  if (!copy_unless_same(ctx, op, self, out)) return false;
  // out holds self's elements from here on: index it with out's own strides.
  AdvancedIndex on_out;
  if (!resolve_advanced_index(ctx, op, out, indices, on_out)) return false;
  detail::dispatch_comparable(self.dtype(), [&](auto tag) {
    put_values<typename decltype(tag)::type>(on_out, out, values, accumulate);
  });
  return ctx.ok();
}

bool index_select_out(KernelContext& ctx, TensorRef self, int64_t dim, TensorRef index, TensorRef out) {
  const char* op = op_name::index_select_out;
  int64_t d = 0;
  if (!detail::check_tensor(ctx, op, "self", self) || !detail::check_tensor(ctx, op, "out", out) ||
      !check_vector_index(ctx, op, index) || !detail::check_same_dtype(ctx, op, "out", out, "self", self) ||
      !detail::wrap_dim(ctx, op, "dim", dim, self.dim(), d))
    return false;
  const int64_t count = index.numel();
  const int64_t size = self.dim() > 0 ? self.size(d) : 1;
  Shape shape = detail::shape_of(self);
  if (self.dim() > 0) shape.sizes[d] = count;
  else if (count != 1) return detail::fail(ctx, op, "self is 0-D, so index must hold one element, got {}", count);
  if (!detail::check_out_shape(ctx, op, "out", out, shape, "self's shape with dimension dim the length of index") ||
      !detail::check_no_overlap(ctx, op, "out", out, "self", self, Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "out", out, "index", index, Alias::Forbidden) ||
      !check_indices(ctx, op, "index", index, d, size, false))
    return false;
  if (out.numel() == 0) return true;
  copy_slices(out, d, self, d, count, [](int64_t i) { return i; }, [&](int64_t i) { return nth_index(index, i); });
  return ctx.ok();
}

bool index_copy_out(KernelContext& ctx, TensorRef self, int64_t dim, TensorRef index, TensorRef source,
                    TensorRef out) {
  const char* op = op_name::index_copy_out;
  int64_t d = 0;
  if (!detail::check_tensor(ctx, op, "self", self) || !detail::check_tensor(ctx, op, "source", source) ||
      !detail::check_tensor(ctx, op, "out", out) || !check_vector_index(ctx, op, index) ||
      !detail::check_same_dtype(ctx, op, "source", source, "self", self) ||
      !detail::check_same_dtype(ctx, op, "out", out, "self", self) ||
      !detail::wrap_dim(ctx, op, "dim", dim, self.dim(), d) ||
      !detail::check_out_shape(ctx, op, "out", out, detail::shape_of(self), "the shape of self"))
    return false;
  const int64_t count = index.numel();
  const int64_t size = self.dim() > 0 ? self.size(d) : 1;
  Shape expected = detail::shape_of(self);
  if (self.dim() > 0) expected.sizes[d] = count;
  if (!detail::check_out_shape(ctx, op, "source", source, expected,
                               "self's shape with dimension dim the length of index") ||
      !detail::check_no_overlap(ctx, op, "out", out, "source", source, Alias::Forbidden) ||
      !detail::check_no_overlap(ctx, op, "out", out, "index", index, Alias::Forbidden) ||
      !check_indices(ctx, op, "index", index, d, size, false) || !copy_unless_same(ctx, op, self, out))
    return false;
  if (out.numel() == 0) return true;
  copy_slices(out, d, source, d, count, [&](int64_t i) { return nth_index(index, i); }, [](int64_t i) { return i; });
  return ctx.ok();
}

}  // namespace et_ops::kernels::portable
