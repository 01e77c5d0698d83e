// Mapping NumPy descriptors to program dtypes and back.
#include "io/npy_descr.h"

#include <fmt/format.h>

namespace et_ops::io {
namespace {

constexpr const char* kSupported = "<f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <i8 |b1";

bool dtype_of_kind(char kind, std::size_t bytes, DType& dtype) {
  switch (kind) {
    case 'f':
      if (bytes == 4) dtype = DType::Float32;
      else if (bytes == 8) dtype = DType::Float64;
      else if (bytes == 2) dtype = DType::Float16;
      else return false;
      return true;
    case 'i':
      if (bytes == 1) dtype = DType::Int8;
      else if (bytes == 2) dtype = DType::Int16;
      else if (bytes == 4) dtype = DType::Int32;
      else if (bytes == 8) dtype = DType::Int64;
      else return false;
      return true;
    case 'u':
      if (bytes == 1) dtype = DType::UInt8;
      else if (bytes == 2) dtype = DType::UInt16;
      else return false;
      return true;
    case 'b':
      dtype = DType::Bool;
      return bytes == 1;
    default: return false;
  }
}

}  // namespace

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "<f4";
    case DType::Float64: return "<f8";
    case DType::Float16: return "<f2";
    case DType::BFloat16: return "<u2";
    case DType::Int8: return "|i1";
    case DType::UInt8: return "|u1";
    case DType::Int16: return "<i2";
    case DType::UInt16: return "<u2";
    case DType::Int32: return "<i4";
    case DType::Int64: return "<i8";
    case DType::Bool: return "|b1";
  }
  return "";
}

DType dtype_of_descr(std::string_view descr, std::string& error) {
  DType dtype = DType::Float32;
  const bool shaped = descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8';
  const std::size_t bytes = shaped ? static_cast<std::size_t>(descr[2] - '0') : 0;
  if (!shaped || !dtype_of_kind(descr[1], bytes, dtype)) {
    error = fmt::format("dtype '{}' is not supported (supported: {})", descr, kSupported);
    return dtype;
  }
  const char order = descr[0];
  if (order == '>' && bytes > 1)
    error = fmt::format("dtype '{}' is big-endian; only little-endian data is supported", descr);
  else if (order != '<' && order != '|' && order != '=' && order != '>')
    error = fmt::format("dtype '{}' has an invalid byte-order character", descr);
  return dtype;
}

}  // namespace et_ops::io
