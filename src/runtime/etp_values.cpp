// Values of an .etp header: tensors (shape, layout, constant data range)
// and the non-tensor kinds (int, double, bool, scalar_type, int_list,
// tensor_list, optional_tensor_list, string, none). A tensor list's elements are checked against the other
// values once all are read (etp_header.cpp).
#include "runtime/etp_values.h"

#include <fmt/format.h>

#include <limits>

#include "et_ops/tensor.h"
#include "runtime/etp_preamble.h"
#include "runtime/load_errors.h"

namespace et_ops::runtime {
namespace {

constexpr const char* kValueTypes =
    "tensor, int, double, bool, scalar_type, int_list, tensor_list, optional_tensor_list, string, none";

std::string dtype_names() {
  std::string names;
  for (int i = 0; i < kDTypeCount; ++i)
    names += fmt::format("{}{}", i ? ", " : "", dtype_name(static_cast<DType>(i)));
  return names;
}

DType parse_dtype_field(const Json& value, const std::string& path) {
  const std::string& name = require_string(value, path);
  if (auto dtype = parse_dtype(name)) return *dtype;
  throw FormatError(fmt::format("{} is '{}', not a known dtype ({})", path, name, dtype_names()));
}

std::vector<int64_t> parse_sizes(const Json& value, const std::string& path) {
  const Json::array_t& items = require_array(value, path);
  if (items.size() > ET_OPS_MAX_DIMS)
    throw FormatError(fmt::format("{} has {} dimensions; at most {} are supported", path, items.size(),
                                  ET_OPS_MAX_DIMS));
  std::vector<int64_t> sizes;
  for (std::size_t d = 0; d < items.size(); ++d)
    sizes.push_back(static_cast<int64_t>(require_non_negative(items[d], item_path(path, d))));
  return sizes;
}

// Bounds every partial product of the sizes (and so every stride), not only
// the element count, which a zero size would hide.
void check_size_product(const TensorSpec& spec, const std::string& path) {
  int64_t bound = 1;
  for (int64_t s : spec.sizes)
    if (__builtin_mul_overflow(bound, s > 0 ? s : 1, &bound))
      throw FormatError(fmt::format("{}.sizes: the element count overflows", path));
  int64_t bytes = 0;
  if (__builtin_mul_overflow(bound, static_cast<int64_t>(dtype_size(spec.dtype)), &bytes))
    throw FormatError(fmt::format("{}.sizes: the size in bytes overflows", path));
}

std::vector<uint8_t> parse_dim_order(const Json* value, std::size_t dims, const std::string& path) {
  std::vector<uint8_t> order;
  if (value == nullptr) {
    for (std::size_t d = 0; d < dims; ++d) order.push_back(static_cast<uint8_t>(d));
    return order;
  }
  const Json::array_t& items = require_array(*value, path);
  if (items.size() != dims)
    throw FormatError(fmt::format("{} has {} entries but the tensor has {} dimensions", path, items.size(), dims));
  std::vector<bool> seen(dims, false);
  for (std::size_t i = 0; i < dims; ++i) {
    const int64_t d = require_int64(items[i], item_path(path, i));
    if (d < 0 || static_cast<std::size_t>(d) >= dims || seen[static_cast<std::size_t>(d)])
      throw FormatError(fmt::format("{} is not a permutation of 0..{}", path, dims - 1));
    seen[static_cast<std::size_t>(d)] = true;
    order.push_back(static_cast<uint8_t>(d));
  }
  return order;
}

void parse_constant_range(const Json& data, TensorModel& tensor, std::size_t segment_size, const std::string& path) {
  require_object(data, path);
  const uint64_t offset = require_non_negative(require_key(data, "offset", path), field_path(path, "offset"));
  const uint64_t nbytes = require_non_negative(require_key(data, "nbytes", path), field_path(path, "nbytes"));
  if (offset % kDataAlignment != 0)
    throw FormatError(fmt::format("{}.offset {} is not a multiple of {}", path, offset, kDataAlignment));
  if (nbytes != tensor.spec.nbytes())
    throw FormatError(fmt::format("{}.nbytes is {} but the dtype and sizes make {} bytes", path, nbytes,
                                  tensor.spec.nbytes()));
  if (offset > segment_size || nbytes > segment_size - offset)
    throw FormatError(fmt::format("{}: {} bytes at offset {} lie outside the data segment ({} bytes)", path,
                                  nbytes, offset, segment_size));
  tensor.constant = true;
  tensor.data_offset = offset;
}

TensorModel parse_tensor(const Json& value, const std::string& path, std::size_t segment_size) {
  TensorModel tensor;
  tensor.spec.dtype = parse_dtype_field(require_key(value, "dtype", path), field_path(path, "dtype"));
  tensor.spec.sizes = parse_sizes(require_key(value, "sizes", path), field_path(path, "sizes"));
  check_size_product(tensor.spec, path);
  tensor.spec.dim_order =
      parse_dim_order(optional_key(value, "dim_order"), tensor.spec.sizes.size(), field_path(path, "dim_order"));
  tensor.strides = detail::strides_for(tensor.spec.sizes, tensor.spec.dim_order);
  if (const Json* data = optional_key(value, "data"))
    parse_constant_range(*data, tensor, segment_size, field_path(path, "data"));
  return tensor;
}

std::vector<int64_t> parse_int_list(const Json& value, const std::string& path) {
  const Json::array_t& items = require_array(value, path);
  std::vector<int64_t> list;
  list.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) list.push_back(require_int64(items[i], item_path(path, i)));
  return list;
}

// `optional`: a null element is None (kNoTensor).
std::vector<uint32_t> parse_element_list(const Json& value, const std::string& path, bool optional) {
  const Json::array_t& items = require_array(value, path);
  std::vector<uint32_t> elements;
  elements.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (optional && items[i].is_null()) {
      elements.push_back(kNoTensor);
      continue;
    }
    const uint64_t index = require_non_negative(items[i], item_path(path, i));
    if (index >= kNoTensor)
      throw FormatError(fmt::format("{} is {}, not a value index", item_path(path, i), index));
    elements.push_back(static_cast<uint32_t>(index));
  }
  return elements;
}

void parse_payload(ValueModel& model, const Json& value, const std::string& path) {
  const std::string value_path = field_path(path, "value");
  const Json& payload = require_key(value, "value", path);
  switch (model.kind) {
    case ValueKind::Int: model.integer = require_int64(payload, value_path); break;
    case ValueKind::Double: model.real = require_number(payload, value_path); break;
    case ValueKind::Bool: model.integer = require_bool(payload, value_path) ? 1 : 0; break;
    case ValueKind::ScalarType: model.integer = static_cast<int64_t>(parse_dtype_field(payload, value_path)); break;
    case ValueKind::IntList: model.list = parse_int_list(payload, value_path); break;
    case ValueKind::TensorList: model.elements = parse_element_list(payload, value_path, false); break;
    case ValueKind::OptionalTensorList: model.elements = parse_element_list(payload, value_path, true); break;
    case ValueKind::String: model.text = require_string(payload, value_path); break;
    case ValueKind::Tensor:
    case ValueKind::None: break;
  }
}

ValueKind parse_kind(const Json& value, const std::string& path) {
  const std::string type_path = field_path(path, "type");
  const std::string& type = require_string(require_key(value, "type", path), type_path);
  if (type == "tensor") return ValueKind::Tensor;
  if (type == "int") return ValueKind::Int;
  if (type == "double") return ValueKind::Double;
  if (type == "bool") return ValueKind::Bool;
  if (type == "scalar_type") return ValueKind::ScalarType;
  if (type == "int_list") return ValueKind::IntList;
  if (type == "tensor_list") return ValueKind::TensorList;
  if (type == "optional_tensor_list") return ValueKind::OptionalTensorList;
  if (type == "string") return ValueKind::String;
  if (type == "none") return ValueKind::None;
  throw FormatError(fmt::format("{} is '{}', not a known value type ({})", type_path, type, kValueTypes));
}

}  // namespace

ValueModel parse_value(const Json& value, const std::string& path, std::size_t data_segment_size) {
  require_object(value, path);
  ValueModel model;
  model.kind = parse_kind(value, path);
  if (model.kind == ValueKind::Tensor) model.tensor = parse_tensor(value, path, data_segment_size);
  else if (model.kind != ValueKind::None) parse_payload(model, value, path);
  return model;
}

}  // namespace et_ops::runtime
