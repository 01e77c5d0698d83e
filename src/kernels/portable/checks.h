// Argument checks, dtype dispatch and strided iteration shared by every
// portable kernel. Each check reports through the context, naming the
// operator, the argument and the offending value, and returns false;
// kernels stop at the first false. Nothing here allocates on the success
// path (shapes have a fixed capacity), so kernels stay allocation-free.
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_CHECKS_H
#define ET_OPS_SRC_KERNELS_PORTABLE_CHECKS_H

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/tensor.h"
#include "kernels/common/tensor_checks.h"

namespace et_ops::kernels::portable::detail {

using kernels::detail::check_dtype;
using kernels::detail::check_tensor;
using kernels::detail::dtype_of;
using kernels::detail::fail;
using kernels::detail::is_dense;
using kernels::detail::list_string;
using kernels::detail::shape_string;
using kernels::detail::Tag;

// ---- shapes ----

struct Shape {
  int64_t dim = 0;
  int64_t sizes[ET_OPS_MAX_DIMS] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d = 0; d < dim; ++d) n *= sizes[d];
    return n;
  }
};

inline Shape shape_of(TensorRef t) {
  Shape s;
  s.dim = t.dim();
  for (int64_t d = 0; d < s.dim; ++d) s.sizes[d] = t.size(d);
  return s;
}

inline std::string list_string(IntList list) { return list_string(list.data(), list.size()); }
inline std::string shape_string(const Shape& s) { return list_string(s.sizes, s.dim); }
inline std::string scalar_string(Scalar s) {
  return s.is_integral() ? fmt::format("{}", s.to_int()) : fmt::format("{}", s.to_double());
}

inline bool check_same_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t,
                             const char* like_name, TensorRef like) {
  if (t.dtype() == like.dtype()) return true;
  return fail(ctx, op, "{} has dtype {}, expected {} (the dtype of {}); dtypes are not promoted", name,
              dtype_name(t.dtype()), dtype_name(like.dtype()), like_name);
}

// The operands of a layer (convolution, linear): input, weight, an optional
// bias and out, each a valid float32 tensor.
inline bool check_layer_tensors(KernelContext& ctx, const char* op, TensorRef input, TensorRef weight,
                                std::optional<TensorRef> bias, TensorRef out) {
  return check_tensor(ctx, op, "input", input) && check_tensor(ctx, op, "weight", weight) &&
         (!bias || check_tensor(ctx, op, "bias", *bias)) && check_tensor(ctx, op, "out", out) &&
         check_dtype(ctx, op, "input", input, DType::Float32) &&
         check_dtype(ctx, op, "weight", weight, DType::Float32) &&
         (!bias || check_dtype(ctx, op, "bias", *bias, DType::Float32)) &&
         check_dtype(ctx, op, "out", out, DType::Float32);
}

inline bool check_rank(KernelContext& ctx, const char* op, const char* name, TensorRef t, int64_t rank) {
  if (t.dim() == rank) return true;
  return fail(ctx, op, "{} must be {}-D, got {}-D with shape {}", name, rank, t.dim(), shape_string(t));
}

inline bool same_shape(TensorRef t, const Shape& s) {
  if (t.dim() != s.dim) return false;
  for (int64_t d = 0; d < s.dim; ++d)
    if (t.size(d) != s.sizes[d]) return false;
  return true;
}

// `what` says where the expected shape comes from ("the shape of self").
inline bool check_out_shape(KernelContext& ctx, const char* op, const char* name, TensorRef out,
                            const Shape& expected, const char* what) {
  if (same_shape(out, expected)) return true;
  return fail(ctx, op, "{} has shape {}, expected {} ({}); outputs are never resized", name, shape_string(out),
              shape_string(expected), what);
}

// ---- memory overlap ----

inline bool overlaps(TensorRef a, TensorRef b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  const auto a_begin = reinterpret_cast<std::uintptr_t>(a.data());
  const auto b_begin = reinterpret_cast<std::uintptr_t>(b.data());
  return a_begin < b_begin + b.nbytes() && b_begin < a_begin + a.nbytes();
}

// The very same tensor: each logical index maps to the same element.
inline bool is_exact_alias(TensorRef a, TensorRef b) {
  if (a.data() != b.data() || a.dtype() != b.dtype() || !a.same_shape(b)) return false;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  return true;
}

enum class Alias { Forbidden, ExactAllowed };

// An out tensor that shares memory with an input would be read after it
// was written; kernels that read each element once before writing it
// (elementwise ops) allow out to be exactly the input, nothing else.
inline bool check_no_overlap(KernelContext& ctx, const char* op, const char* out_name, TensorRef out,
                             const char* in_name, TensorRef in, Alias alias) {
  if (!overlaps(out, in)) return true;
  if (alias == Alias::ExactAllowed && is_exact_alias(out, in)) return true;
  if (alias == Alias::ExactAllowed)
    return fail(ctx, op, "{} overlaps {} in memory without being the very same tensor (same data, shape and strides)",
                out_name, in_name);
  return fail(ctx, op, "{} overlaps {} in memory; this kernel needs them disjoint", out_name, in_name);
}

// ---- dtype dispatch ----

inline constexpr const char* kArithmeticDtypes = "float32, float64, int8, uint8, int16, int32, int64";

// Calls f(Tag<T>{}) with the storage type of a dtype that add, mul and relu
// support; returns false for any other dtype.
template <typename F>
bool dispatch_arithmetic(DType t, F&& f) {
  switch (t) {
    case DType::Float32: f(Tag<float>{}); return true;
    case DType::Float64: f(Tag<double>{}); return true;
    case DType::Int8: f(Tag<int8_t>{}); return true;
    case DType::UInt8: f(Tag<uint8_t>{}); return true;
    case DType::Int16: f(Tag<int16_t>{}); return true;
    case DType::Int32: f(Tag<int32_t>{}); return true;
    case DType::Int64: f(Tag<int64_t>{}); return true;
    default: return false;
  }
}

inline bool check_arithmetic_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (dispatch_arithmetic(t.dtype(), [](auto) {})) return true;
  return fail(ctx, op, "{} has dtype {}, which is not supported; expected one of {}", name, dtype_name(t.dtype()),
              kArithmeticDtypes);
}

inline constexpr const char* kComparableDtypes = "float32, float64, int8, uint8, int16, int32, int64, bool";

// Calls f(Tag<T>{}) for the arithmetic dtypes and for bool (T = bool; read
// bool elements with load(), which takes any nonzero byte as true).
template <typename F>
bool dispatch_comparable(DType t, F&& f) {
  if (t == DType::Bool) {
    f(Tag<bool>{});
    return true;
  }
  return dispatch_arithmetic(t, f);
}

inline bool check_comparable_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (dispatch_comparable(t.dtype(), [](auto) {})) return true;
  return fail(ctx, op, "{} has dtype {}, which is not supported; expected one of {}", name, dtype_name(t.dtype()),
              kComparableDtypes);
}

// An element as a value: a bool byte other than 0 or 1 (which a program's
// bytes may hold) is true, never undefined behaviour.
template <typename T>
T load(const T* p) {
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t byte;
    std::memcpy(&byte, p, 1);
    return byte != 0;
  } else {
    return *p;
  }
}

inline constexpr const char* kFloatingDtypes = "float32, float64";

// Calls f(Tag<T>{}) for float32 and float64, the dtypes of the kernels that
// compute in floating point only; returns false for any other dtype.
template <typename F>
bool dispatch_floating(DType t, F&& f) {
  switch (t) {
    case DType::Float32: f(Tag<float>{}); return true;
    case DType::Float64: f(Tag<double>{}); return true;
    default: return false;
  }
}

inline bool check_floating_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (dispatch_floating(t.dtype(), [](auto) {})) return true;
  return fail(ctx, op, "{} has dtype {}, which is not supported; expected one of {} (dtypes are not promoted)", name,
              dtype_name(t.dtype()), kFloatingDtypes);
}

// Calls f(std::integral_constant<size_t, N>{}) with a dtype's element size,
// so kernels that move elements without reading them (copies, padding,
// gathers) serve every dtype with four instantiations.
template <typename F>
void dispatch_element_size(std::size_t size, F&& f) {
  switch (size) {
    case 1: f(std::integral_constant<std::size_t, 1>{}); break;
    case 2: f(std::integral_constant<std::size_t, 2>{}); break;
    case 4: f(std::integral_constant<std::size_t, 4>{}); break;
    default: f(std::integral_constant<std::size_t, 8>{}); break;
  }
}

// Converts a Scalar to the element type as aten does (c10 checked_convert):
// an integral tensor rejects a floating scalar and one out of its range
// (an unsigned type also takes -max..-1, which wrap as two's complement, so
// uint8 `a + (-2) * b` is `a + 254 * b`); a floating tensor rejects a finite
// value beyond its range.
template <typename T>
bool scalar_to(KernelContext& ctx, const char* op, const char* name, Scalar s, T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (s.is_integral()) {
      value = static_cast<T>(s.to_int());  // int64 -> T directly: one rounding, as aten
      return true;
    }
    const double v = s.to_double();
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max()))
      return fail(ctx, op, "{} = {} cannot be converted to {} without overflow", name, v, dtype_name(dtype_of<T>()));
    value = static_cast<T>(v);
    return true;
  } else {
    if (!s.is_integral())
      return fail(ctx, op, "{} = {} is a floating point number; integral tensors need an integral {}", name,
                  s.to_double(), name);
    const int64_t v = s.to_int();
    const int64_t max = static_cast<int64_t>(std::numeric_limits<T>::max());
    const int64_t min = std::is_unsigned_v<T> ? -max : static_cast<int64_t>(std::numeric_limits<T>::min());
    if (v < min || v > max)
      return fail(ctx, op, "{} = {} cannot be converted to {} without overflow", name, v, dtype_name(dtype_of<T>()));
    value = static_cast<T>(v);
    return true;
  }
}

// Converts a Scalar operand (the `other` of add.Scalar_out and friends) as
// aten converts a wrapped number: without a range check (a floating tensor
// takes the nearest value or an infinity, an integral one the value modulo
// 2^bits). A floating scalar with an integral tensor would promote the
// result to floating point, which an out tensor of self's dtype cannot
// hold, so it is refused.
template <typename T>
bool operand_to(KernelContext& ctx, const char* op, const char* name, Scalar s, T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    value = s.is_integral() ? static_cast<T>(s.to_int()) : static_cast<T>(s.to_double());
    return true;
  } else {
    if (!s.is_integral())
      return fail(ctx, op, "{} = {} is a floating point number; with an integral self the result would be floating "
                  "point (dtypes are not promoted)", name, s.to_double());
    value = static_cast<T>(static_cast<uint64_t>(s.to_int()));
    return true;
  }
}

// A Scalar as aten's toLong takes it: an int as it is, a double truncated
// toward zero; NaN and values beyond int64 are reported.
inline bool truncate_to_int64(KernelContext& ctx, const char* op, const char* name, Scalar s, Scalar& result) {
  if (s.is_integral()) {
    result = s;
    return true;
  }
  const double v = s.to_double();
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
    return fail(ctx, op, "{} = {} cannot be converted to int64 without overflow", name, v);
  result = Scalar(static_cast<int64_t>(v));
  return true;
}

// A 0-dim tensor holding one element, so a Scalar operand can go through
// the same broadcasting loops as a tensor one.
template <typename T>
class ScalarTensor {
 public:
  explicit ScalarTensor(T value) : value_(value) {
    raw_.data = &value_;
    raw_.numel = 1;
    raw_.dtype = static_cast<int32_t>(dtype_of<T>());
    raw_.dim = 0;
  }
  ScalarTensor(const ScalarTensor&) = delete;
  ScalarTensor& operator=(const ScalarTensor&) = delete;
  TensorRef ref() const { return TensorRef(raw_); }

 private:
  T value_;
  et_ops_tensor raw_{};
};

// ---- int list arguments ----

// An int list from a C++ caller is a bare view: a negative size, or
// elements without data, is reported, never read.
inline bool check_int_list(KernelContext& ctx, const char* op, const char* name, IntList list) {
  if (list.size() >= 0 && (list.size() == 0 || list.data() != nullptr)) return true;
  return fail(ctx, op, "{} is a malformed int list", name);
}

// A (height, width) pair of a 2-D spatial parameter.
struct Pair {
  int64_t h = 0;
  int64_t w = 0;
};

// Division rounding toward positive infinity, for a >= 0 and b > 0,
// without overflow.
inline int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

// Division rounding toward negative infinity, for a positive divisor,
// without overflow.
inline int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -ceil_div(-a, b); }

// Normalises a possibly negative dimension index against `rank` (a 0-dim
// tensor accepts -1 and 0, as aten's maybe_wrap_dim).
inline bool wrap_dim(KernelContext& ctx, const char* op, const char* name, int64_t dim, int64_t rank,
                     int64_t& wrapped) {
  const int64_t range = rank > 0 ? rank : 1;
  if (dim < -range || dim >= range)
    return fail(ctx, op, "{} = {} is out of range for a {}-D tensor (expected a value in [{}, {}])", name, dim, rank,
                -range, range - 1);
  wrapped = dim < 0 ? dim + range : dim;
  return true;
}

// ---- broadcasting ----

// The shape PyTorch's broadcasting gives a and b: trailing dimensions
// aligned, each pair equal or one of them 1.
inline bool broadcast_shape(KernelContext& ctx, const char* op, const char* a_name, TensorRef a, const char* b_name,
                            TensorRef b, Shape& result) {
  result.dim = a.dim() > b.dim() ? a.dim() : b.dim();
  for (int64_t i = 0; i < result.dim; ++i) {
    const int64_t ad = a.dim() - result.dim + i;
    const int64_t bd = b.dim() - result.dim + i;
    const int64_t as = ad >= 0 ? a.size(ad) : 1;
    const int64_t bs = bd >= 0 ? b.size(bd) : 1;
    if (as != bs && as != 1 && bs != 1)
      return fail(ctx, op, "{} of shape {} and {} of shape {} cannot be broadcast: sizes {} and {} at dimension {} of the result",
                  a_name, shape_string(a), b_name, shape_string(b), as, bs, i);
    result.sizes[i] = as == 1 ? bs : as;
  }
  return true;
}

inline bool check_broadcastable_to(KernelContext& ctx, const char* op, const char* name, TensorRef t,
                                   const Shape& target, const char* target_name) {
  bool ok = t.dim() <= target.dim;
  for (int64_t d = 0; ok && d < t.dim(); ++d) {
    const int64_t size = t.size(d);
    ok = size == 1 || size == target.sizes[target.dim - t.dim() + d];
  }
  if (ok) return true;
  return fail(ctx, op, "{} of shape {} cannot be broadcast to {} (the shape of {})", name, shape_string(t),
              shape_string(target), target_name);
}

// Strides of t seen in `target`'s index space: 0 where t is broadcast
// (a missing leading dimension or a size of 1).
inline void broadcast_strides(TensorRef t, const Shape& target, int64_t* strides) {
  for (int64_t d = 0; d < target.dim; ++d) {
    const int64_t td = t.dim() - target.dim + d;
    strides[d] = (td < 0 || t.size(td) == 1) ? 0 : t.stride(td);
  }
}

// ---- strided iteration ----

// K operands walked together over one index space; operand k's element at
// index i sits at sum over d of i[d] * strides[k][d] (elements, not bytes).
template <std::size_t K>
struct StridedLoop {
  int64_t dim = 0;
  int64_t sizes[ET_OPS_MAX_DIMS] = {};
  int64_t strides[K][ET_OPS_MAX_DIMS] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d = 0; d < dim; ++d) n *= sizes[d];
    return n;
  }

  // Drops size-1 dimensions and merges neighbours that every operand steps
  // through as one, so contiguous operands become one long row.
  void coalesce() {
    int64_t kept = 0;
    for (int64_t d = 0; d < dim; ++d) {
      if (sizes[d] == 1) continue;
      if (kept > 0 && mergeable(kept - 1, d)) {
        sizes[kept - 1] *= sizes[d];
        for (std::size_t k = 0; k < K; ++k) strides[k][kept - 1] = strides[k][d];
        continue;
      }
      sizes[kept] = sizes[d];
      for (std::size_t k = 0; k < K; ++k) strides[k][kept] = strides[k][d];
      ++kept;
    }
    dim = kept;
  }

 private:
  bool mergeable(int64_t outer, int64_t inner) const {
    for (std::size_t k = 0; k < K; ++k)
      if (strides[k][outer] != strides[k][inner] * sizes[inner]) return false;
    return true;
  }
};

// A loop over `shape` whose operands broadcast to it (an operand of the
// very shape just contributes its own strides).
template <std::size_t K>
StridedLoop<K> broadcast_loop(const Shape& shape, const TensorRef (&operands)[K]) {
  StridedLoop<K> loop;
  loop.dim = shape.dim;
  for (int64_t d = 0; d < shape.dim; ++d) loop.sizes[d] = shape.sizes[d];
  for (std::size_t k = 0; k < K; ++k) broadcast_strides(operands[k], shape, loop.strides[k]);
  loop.coalesce();
  return loop;
}

// Calls row(offsets, length, inner_strides) for every run of the innermost
// dimension: offsets[k] is the row's first element in operand k, whose
// following elements are inner_strides[k] apart.
template <std::size_t K, typename Row>
void for_each_row(const StridedLoop<K>& loop, Row&& row) {
  if (loop.numel() == 0) return;
  int64_t offsets[K] = {};
  int64_t inner_strides[K] = {};
  int64_t length = 1;
  if (loop.dim > 0) {
    length = loop.sizes[loop.dim - 1];
    for (std::size_t k = 0; k < K; ++k) inner_strides[k] = loop.strides[k][loop.dim - 1];
  }
  int64_t index[ET_OPS_MAX_DIMS] = {};
  const int64_t outer_dims = loop.dim > 0 ? loop.dim - 1 : 0;
  for (;;) {
    row(static_cast<const int64_t*>(offsets), length, static_cast<const int64_t*>(inner_strides));
    int64_t d = outer_dims - 1;
    for (; d >= 0; --d) {
      ++index[d];
      for (std::size_t k = 0; k < K; ++k) offsets[k] += loop.strides[k][d];
      if (index[d] < loop.sizes[d]) break;
      for (std::size_t k = 0; k < K; ++k) offsets[k] -= loop.sizes[d] * loop.strides[k][d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// When the two innermost dimensions of `loop` swap (out steps 1 along the
// last, in steps 1 along the one before: a transposition, as of attention's
// keys), copies them in square tiles, so that both sides touch a few cache
// lines at a time instead of one line per element read; false otherwise.
template <std::size_t N>
bool copy_transposed(const StridedLoop<2>& loop, unsigned char* dst, const unsigned char* src) {
  const int64_t d = loop.dim;
  if (d < 2 || loop.strides[0][d - 1] != 1 || loop.strides[1][d - 2] != 1) return false;
  // Elements move as unsigned integers of their size (every element size
  // dispatch_element_size makes is 1, 2, 4 or 8 bytes).
  using Word = std::conditional_t<N == 1, uint8_t, std::conditional_t<N == 2, uint16_t,
                                  std::conditional_t<N == 4, uint32_t, uint64_t>>>;
  static_assert(sizeof(Word) == N);
  constexpr int64_t kTile = 16;
  const int64_t columns = loop.sizes[d - 1], column_step = loop.strides[1][d - 1];
  StridedLoop<2> rows = loop;  // each row of the dimension before the last, whose in step is 1
  rows.dim = d - 1;
  for_each_row(rows, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    for (int64_t i0 = 0; i0 < length; i0 += kTile)
      for (int64_t j0 = 0; j0 < columns; j0 += kTile) {
        const int64_t i1 = std::min(length, i0 + kTile), j1 = std::min(columns, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i) {
          Word* to = reinterpret_cast<Word*>(dst) + offset[0] + i * step[0];
          const Word* from = reinterpret_cast<const Word*>(src) + offset[1] + i;
          for (int64_t j = j0; j < j1; ++j) to[j] = from[j * column_step];
        }
      }
  });
  return true;
}

// Copies operand 1 of `loop` into operand 0, elements of N bytes.
template <std::size_t N>
void copy_strided(const StridedLoop<2>& loop, void* out, const void* in) {
  auto* dst = static_cast<unsigned char*>(out);
  const auto* src = static_cast<const unsigned char*>(in);
  if (copy_transposed<N>(loop, dst, src)) return;
  for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    if (step[0] == 1 && step[1] == 1) {
      std::memcpy(dst + offset[0] * N, src + offset[1] * N, static_cast<std::size_t>(length) * N);
      return;
    }
    for (int64_t j = 0; j < length; ++j)
      std::memcpy(dst + (offset[0] + j * step[0]) * N, src + (offset[1] + j * step[1]) * N, N);
  });
}

// Walks one tensor's elements in logical (row-major) order, yielding the
// memory offset of each.
class LogicalCursor {
 public:
  explicit LogicalCursor(TensorRef t) : tensor_(t) {}
  int64_t offset() const { return offset_; }
  void next() {
    for (int64_t d = tensor_.dim() - 1; d >= 0; --d) {
      if (tensor_.size(d) == 1) continue;  // never advances; its stride may be anything
      ++index_[d];
      offset_ += tensor_.stride(d);
      if (index_[d] < tensor_.size(d)) return;
      offset_ -= tensor_.size(d) * tensor_.stride(d);
      index_[d] = 0;
    }
  }

 private:
  TensorRef tensor_;
  int64_t index_[ET_OPS_MAX_DIMS] = {};
  int64_t offset_ = 0;
};

// Calls f(in, out, n) over runs of n elements of self and out that sit at
// consecutive addresses in both, in logical order: rows that both tensors
// store contiguously go straight to f, others pass through a buffer in
// chunks. f sees every element once, so results do not depend on layouts;
// f must allow in == out (the buffer, or an in-place call).
template <typename T, typename F>
void map_contiguous(TensorRef self, TensorRef out, F&& f) {
  const TensorRef operands[2] = {out, self};
  const auto loop = broadcast_loop(shape_of(out), operands);
  T* o = out.data_as<T>();
  const T* a = self.data_as<const T>();
  for_each_row(loop, [&](const int64_t* offset, int64_t length, const int64_t* step) {
    if (step[0] == 1 && step[1] == 1) {
      f(a + offset[1], o + offset[0], static_cast<std::size_t>(length));
      return;
    }
    constexpr int64_t kChunk = 256;
    T buffer[kChunk];
    for (int64_t start = 0; start < length; start += kChunk) {
      const int64_t n = length - start < kChunk ? length - start : kChunk;
      for (int64_t j = 0; j < n; ++j) buffer[j] = a[offset[1] + (start + j) * step[1]];
      f(static_cast<const T*>(buffer), buffer, static_cast<std::size_t>(n));
      for (int64_t j = 0; j < n; ++j) o[offset[0] + (start + j) * step[0]] = buffer[j];
    }
  });
}

// ---- elementwise kernels of one input ----

using DtypeCheck = bool (*)(KernelContext&, const char*, const char*, TensorRef);

// What every kernel out = f(self) checks: both tensors sound, self of a
// dtype `supported` accepts, out of self's dtype and shape, and out either
// disjoint from self or exactly self.
inline bool check_unary(KernelContext& ctx, const char* op, TensorRef self, TensorRef out, DtypeCheck supported) {
  return check_tensor(ctx, op, "self", self) && check_tensor(ctx, op, "out", out) &&
         supported(ctx, op, "self", self) && check_same_dtype(ctx, op, "out", out, "self", self) &&
         check_out_shape(ctx, op, "out", out, shape_of(self), "the shape of self") &&
         check_no_overlap(ctx, op, "out", out, "self", self, Alias::ExactAllowed);
}

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_CHECKS_H
