// Element types: names as the .etp format spells them, sizes, bounds.
#ifndef ET_OPS_DTYPE_H
#define ET_OPS_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "et_ops/abi.h"
#include "et_ops/status.h"

namespace et_ops {

enum class DType : int32_t {
  Float32 = ET_OPS_DTYPE_FLOAT32,
  Float64 = ET_OPS_DTYPE_FLOAT64,
  Float16 = ET_OPS_DTYPE_FLOAT16,
  BFloat16 = ET_OPS_DTYPE_BFLOAT16,
  Int8 = ET_OPS_DTYPE_INT8,
  UInt8 = ET_OPS_DTYPE_UINT8,
  Int16 = ET_OPS_DTYPE_INT16,
  UInt16 = ET_OPS_DTYPE_UINT16,
  Int32 = ET_OPS_DTYPE_INT32,
  Int64 = ET_OPS_DTYPE_INT64,
  Bool = ET_OPS_DTYPE_BOOL,
};

inline constexpr int kDTypeCount = ET_OPS_DTYPE_COUNT;

inline constexpr bool is_valid_dtype(int32_t raw) { return raw >= 0 && raw < kDTypeCount; }

// The .etp spelling: "float32", "int8", ...
inline constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "invalid";
}

inline constexpr std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float64:
    case DType::Int64: return 8;
    case DType::Float32:
    case DType::Int32: return 4;
    case DType::Float16:
    case DType::BFloat16:
    case DType::Int16:
    case DType::UInt16: return 2;
    case DType::Int8:
    case DType::UInt8:
    case DType::Bool: return 1;
  }
  return 0;
}

inline constexpr bool is_floating(DType t) {
  return t == DType::Float32 || t == DType::Float64 || t == DType::Float16 || t == DType::BFloat16;
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
