// Mapping NumPy descriptors to program dtypes and back.
#include "io/npy_descr.h"

#include <fmt/format.h>

namespace et_ops::io {
namespace {

// Every dtype (et_ops/dtypes.def), in table order.
constexpr DType kDtypes[] = {
#define ET_OPS_DTYPE(enumerator, abi_value, name, type, size, npy, floating, numpy) DType::enumerator,
#include "et_ops/dtypes.def"
#undef ET_OPS_DTYPE
};

std::string supported_descriptors() {
  std::string text;
  for (DType dtype : kDtypes)
    if (has_numpy_type(dtype)) text += (text.empty() ? "" : " ") + std::string(dtype_npy_descr(dtype));
  return text;
}

// The dtype NumPy's kind character and size name (bfloat16's raw bits read as uint16).
bool dtype_of_kind(char kind, std::size_t bytes, DType& dtype) {
  for (DType candidate : kDtypes) {
    const std::string_view descr = dtype_npy_descr(candidate);
    if (has_numpy_type(candidate) && descr[1] == kind && dtype_size(candidate) == bytes) {
      dtype = candidate;
      return true;
    }
  }
  return false;
}

}  // namespace

std::string npy_descr(DType dtype) { return std::string(dtype_npy_descr(dtype)); }

DType dtype_of_descr(std::string_view descr, std::string& error) {
  DType dtype = DType::Float32;
  const bool shaped = descr.size() == 3 && descr[2] >= '1' && descr[2] <= '8';
  const std::size_t bytes = shaped ? static_cast<std::size_t>(descr[2] - '0') : 0;
  if (!shaped || !dtype_of_kind(descr[1], bytes, dtype)) {
    error = fmt::format("dtype '{}' is not supported (supported: {})", descr, supported_descriptors());
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
