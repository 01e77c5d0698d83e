// Element types: names as the .etp format spells them, sizes, bounds.
#ifndef ET_OPS_DTYPE_H
#define ET_OPS_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "et_ops/abi.h"
#include "et_ops/half.h"

namespace et_ops {

// The element types (et_ops/dtypes.def, the one table of them).
enum class DType : int32_t {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) enumerator = abi_value,
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
};

inline constexpr int kDTypeCount = ET_OPS_DTYPE_COUNT;
static_assert(static_cast<int>(DType::Bool) + 1 == kDTypeCount, "et_ops/dtypes.def must list every ABI dtype");

inline constexpr bool is_valid_dtype(int32_t raw) { return raw >= 0 && raw < kDTypeCount; }

// The .etp spelling: "float32", "int8", ...
inline constexpr std::string_view dtype_name(DType t) {
  switch (t) {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  case DType::enumerator: return name;
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
  }
  return "invalid";
}

inline constexpr std::size_t dtype_size(DType t) {
  switch (t) {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  case DType::enumerator: return size;
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
  }
  return 0;
}

inline constexpr bool is_floating(DType t) {
  switch (t) {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  case DType::enumerator: return floating;
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
  }
  return false;
}

// The .npy descriptor of the elements ("<f4"); bfloat16's is that of its
// raw bits, "<u2".
inline constexpr std::string_view dtype_npy_descr(DType t) {
  switch (t) {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  case DType::enumerator: return npy;
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
  }
  return "";
}

// Whether NumPy has the type (not bfloat16).
inline constexpr bool has_numpy_type(DType t) {
  switch (t) {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  case DType::enumerator: return numpy;
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
  }
  return false;
}

namespace detail {
template <typename T>
struct DTypeOf {
  static_assert(sizeof(T) == 0, "not a tensor element type (et_ops/dtypes.def)");
};
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  template <>                                                                        \
  struct DTypeOf<type> {                                                             \
    static constexpr DType value = DType::enumerator;                                \
  };                                                                                 \
  static_assert(sizeof(type) == (size), "et_ops/dtypes.def: the size of " name);
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
}  // namespace detail

// The dtype whose elements are stored as T (float: Float32, Half: Float16, ...).
template <typename T>
constexpr DType dtype_of() {
  return detail::DTypeOf<T>::value;
}

inline std::optional<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto t = static_cast<DType>(i);
    if (dtype_name(t) == name) return t;
  }
  return std::nullopt;
}

}  // namespace et_ops

#endif  // ET_OPS_DTYPE_H
