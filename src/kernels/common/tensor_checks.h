// The checks every kernel library runs on its tensor arguments before
// touching memory, and the message helpers they report with. Each check
// reports through the context, naming the operator, the argument and the
// offending value, and returns false; kernels stop at the first false.
#ifndef ET_OPS_SRC_KERNELS_COMMON_TENSOR_CHECKS_H
#define ET_OPS_SRC_KERNELS_COMMON_TENSOR_CHECKS_H

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "et_ops/dtype.h"
#include "et_ops/half.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::detail {

// The formatting every failure shares, out of line: a call site only packs
// its arguments (kernels report from hundreds of places).
[[gnu::noinline]] inline bool vfail(KernelContext& ctx, const char* op, fmt::string_view format,
                                    fmt::format_args args) {
  ctx.fail(fmt::format("{}: {}", op, fmt::vformat(format, args)));
  return false;
}

// Reports fmt-formatted text, prefixed with the operator name.
template <typename... Args>
bool fail(KernelContext& ctx, const char* op, fmt::format_string<Args...> format, Args&&... args) {
  return vfail(ctx, op, format, fmt::make_format_args(args...));
}

inline std::string list_string(const int64_t* values, int64_t count) {
  std::string s = "[";
  for (int64_t i = 0; i < count; ++i) s += fmt::format(i ? ", {}" : "{}", values[i]);
  return s + "]";
}
inline std::string shape_string(TensorRef t) { return list_string(t.sizes(), t.dim()); }

// True when the strides lay the sizes out densely without overlap (some
// permutation of row-major): memory offsets [0, numel) then hold every
// element exactly once, so the tensor's extent is known. The strides of
// size-1 dimensions never move and are ignored.
inline bool is_dense(TensorRef t) {
  int64_t dims[ET_OPS_MAX_DIMS];
  int64_t count = 0;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) dims[count++] = d;
  // Insertion sort by stride, innermost first (at most ET_OPS_MAX_DIMS dims).
  for (int64_t i = 1; i < count; ++i)
    for (int64_t j = i; j > 0 && t.stride(dims[j]) < t.stride(dims[j - 1]); --j) std::swap(dims[j], dims[j - 1]);
  int64_t expected = 1;
  for (int64_t i = 0; i < count; ++i) {
    if (t.stride(dims[i]) != expected) return false;
    expected *= t.size(dims[i]);
  }
  return true;
}

// The structural promises kernels rely on before touching memory: a valid
// dtype and rank, sizes whose product fits int64 (even with a zero size
// elsewhere, so size arithmetic cannot overflow) and equals numel, elements
// present when numel > 0, data aligned to its element type, and a dense
// layout. A tensor that breaks one is reported, never read.
inline bool check_tensor(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  const et_ops_tensor& raw = t.raw();
  if (!is_valid_dtype(raw.dtype)) return fail(ctx, op, "{} has an invalid dtype code {}", name, raw.dtype);
  if (raw.dim < 0 || raw.dim > ET_OPS_MAX_DIMS)
    return fail(ctx, op, "{} has {} dimensions; at most {} are supported", name, raw.dim, ET_OPS_MAX_DIMS);
  if (raw.dim > 0 && (raw.sizes == nullptr || raw.strides == nullptr))
    return fail(ctx, op, "{} has no sizes or strides", name);
  int64_t nonzero_product = 1;
  int64_t product = 1;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.size(d);
    if (size < 0) return fail(ctx, op, "{} has a negative size {} in dimension {}", name, size, d);
    if (size > 1 && nonzero_product > std::numeric_limits<int64_t>::max() / size)
      return fail(ctx, op, "{} has sizes {} whose product overflows", name, shape_string(t));
    if (size > 0) nonzero_product *= size;
    product *= size;
  }
  if (product != t.numel())
    return fail(ctx, op, "{} has numel {} but sizes {} hold {} elements", name, t.numel(), shape_string(t), product);
  if (t.numel() > 0 && t.data() == nullptr) return fail(ctx, op, "{} has {} elements but no data", name, t.numel());
  if (reinterpret_cast<std::uintptr_t>(t.data()) % dtype_size(t.dtype()) != 0)
    return fail(ctx, op, "{} data at {} is not aligned to its {}-byte elements", name, t.data(),
                dtype_size(t.dtype()));
  if (t.numel() > 0 && !is_dense(t))
    return fail(ctx, op, "{} has strides {}, which are not a dense layout of sizes {}", name,
                list_string(t.strides(), t.dim()), shape_string(t));
  return true;
}

inline bool check_dtype(KernelContext& ctx, const char* op, const char* name, TensorRef t, DType expected) {
  if (t.dtype() == expected) return true;
  return fail(ctx, op, "{} must be {}, got {}", name, dtype_name(expected), dtype_name(t.dtype()));
}

// The dtype whose elements are stored as T (et_ops/dtype.h).
using ::et_ops::dtype_of;

// Carries an element type into a generic lambda: dispatch calls f(Tag<T>{}).
template <typename T>
struct Tag {
  using type = T;
};

}  // namespace et_ops::kernels::detail

#endif  // ET_OPS_SRC_KERNELS_COMMON_TENSOR_CHECKS_H
