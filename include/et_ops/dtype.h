// Element types: names as the .etp format spells them, sizes, bounds.
#ifndef ET_OPS_DTYPE_H
#define ET_OPS_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "et_ops/abi.h"
#include "et_ops/half.h"
#include "et_ops/status.h"

namespace et_ops {

// The element types (et_ops/dtypes.def, the one table of them).
enum class DType : int32_t {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) enumerator = abi_value,
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
};

inline constexpr int kDTypeCount = ET_OPS_DTYPE_COUNT;

inline constexpr bool is_valid_dtype(int32_t raw) { return raw >= 0 && raw < kDTypeCount; }

// What et_ops/dtypes.def says of a dtype, indexed by its ABI value.
struct DTypeFacts {
  int32_t abi_value;
  std::string_view name;  // the .etp spelling: "float32", "int8", ...
  std::size_t size;
  std::string_view npy_descr;  // "<f4"; bfloat16's is that of its raw bits, "<u2"
  bool floating;
  bool numpy;  // whether NumPy has the type (not bfloat16)
};
inline constexpr DTypeFacts kDTypeFacts[] = {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) \
  {abi_value, name, size, npy, floating, numpy},
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
};
static_assert(std::size(kDTypeFacts) == kDTypeCount, "et_ops/dtypes.def must list every ABI dtype");

namespace detail {
constexpr bool facts_in_abi_order() {
  for (int i = 0; i < kDTypeCount; ++i)
    if (kDTypeFacts[i].abi_value != i) return false;
  return true;
}
static_assert(facts_in_abi_order(), "et_ops/dtypes.def must list the dtypes in the order of their ABI values");
inline constexpr DTypeFacts kInvalidDType{-1, "invalid", 0, "", false, false};
}  // namespace detail

inline constexpr const DTypeFacts& dtype_facts(DType t) {
  const auto i = static_cast<int32_t>(t);
  return is_valid_dtype(i) ? kDTypeFacts[i] : detail::kInvalidDType;
}

inline constexpr std::string_view dtype_name(DType t) { return dtype_facts(t).name; }
inline constexpr std::size_t dtype_size(DType t) { return dtype_facts(t).size; }
inline constexpr bool is_floating(DType t) { return dtype_facts(t).floating; }
inline constexpr std::string_view dtype_npy_descr(DType t) { return dtype_facts(t).npy_descr; }
inline constexpr bool has_numpy_type(DType t) { return dtype_facts(t).numpy; }

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

// The dtype named `name` ("float32", "int8", ...); Invalid for any other text.
inline Result<DType> parse_dtype(std::string_view name) {
  for (int i = 0; i < kDTypeCount; ++i) {
    auto t = static_cast<DType>(i);
    if (dtype_name(t) == name) return t;
  }
  return Status(StatusCode::Invalid, "unknown dtype '" + std::string(name) + "'");
}

}  // namespace et_ops

#endif  // ET_OPS_DTYPE_H
