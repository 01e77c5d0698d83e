// Values of an .etp header: tensors (shape, layout, constant or state data
// range, symbolic sizes) and the non-tensor kinds (int, double, bool, scalar_type, int_list,
// tensor_list, optional_tensor_list, string, none). A tensor list's elements are checked against the other
// values once all are read (etp_header.cpp).
#include "runtime/etp_values.h"

#include <fmt/format.h>

#include <limits>

#include "et_ops/tensor.h"
#include "runtime/etp_preamble.h"
#include "runtime/load_errors.h"
#include "runtime/symbols.h"

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

void require_version_2(const ValueContext& context, const std::string& path, const char* what) {
  if (context.version < 2)
    throw FormatError(fmt::format("{} is {}, which needs format version 2 (the file says {})", path, what,
                                  context.version));
}

// Static sizes go to `sizes`; a symbolic entry puts its largest value there
// and fills `symbolic` (one entry per dimension).
void parse_sizes(const Json& value, const std::string& path, const ValueContext& context, TensorModel& tensor) {
  const Json::array_t& items = require_array(value, path);
  if (items.size() > ET_OPS_MAX_DIMS)
    throw FormatError(fmt::format("{} has {} dimensions; at most {} are supported", path, items.size(),
                                  ET_OPS_MAX_DIMS));
  std::vector<SymbolicInt> entries;
  bool symbolic = false;
  for (std::size_t d = 0; d < items.size(); ++d) {
    if (items[d].is_object()) require_version_2(context, item_path(path, d), "symbolic");
    entries.push_back(parse_symbolic_int(items[d], *context.symbols, item_path(path, d), 0));
    symbolic = symbolic || is_symbolic(entries.back());
  }
  for (const SymbolicInt& e : entries) tensor.spec.sizes.push_back(bounds_of(e, *context.symbols).max);
  if (symbolic) tensor.symbolic_sizes = std::move(entries);
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

// "state": true makes a tensor with data mutable per run state (version 2).
void parse_state_flag(const Json& value, TensorModel& tensor, const std::string& path, const ValueContext& context) {
  const Json* state = optional_key(value, "state");
  if (state == nullptr || !require_bool(*state, field_path(path, "state"))) return;
  require_version_2(context, field_path(path, "state"), "true");
  if (!tensor.constant)
    throw FormatError(fmt::format("{}.state is true but the tensor has no data (its initial bytes)", path));
  if (!tensor.symbolic_sizes.empty())
    throw FormatError(fmt::format("{}: a state tensor's sizes must be static", path));
  tensor.constant = false;
  tensor.state = true;
}

TensorModel parse_tensor(const Json& value, const std::string& path, const ValueContext& context) {
  TensorModel tensor;
  tensor.spec.dtype = parse_dtype_field(require_key(value, "dtype", path), field_path(path, "dtype"));
  parse_sizes(require_key(value, "sizes", path), field_path(path, "sizes"), context, tensor);
  check_size_product(tensor.spec, path);
  tensor.spec.dim_order =
      parse_dim_order(optional_key(value, "dim_order"), tensor.spec.sizes.size(), field_path(path, "dim_order"));
  tensor.strides = detail::strides_for(tensor.spec.sizes, tensor.spec.dim_order);
  if (const Json* data = optional_key(value, "data")) {
    if (!tensor.symbolic_sizes.empty())
      throw FormatError(fmt::format("{}: a tensor with data must have static sizes", path));
    parse_constant_range(*data, tensor, context.data_segment_size, field_path(path, "data"));
  }
  parse_state_flag(value, tensor, path, context);
  return tensor;
}

// An int or an int_list element: an integer, or symbolic (version 2), whose
// payload is its value at the symbols' largest values.
int64_t parse_int_entry(const Json& value, const std::string& path, const ValueContext& context,
                        ValueModel& model, bool& symbolic) {
  if (value.is_object()) require_version_2(context, path, "symbolic");
  const SymbolicInt e = parse_symbolic_int(value, *context.symbols, path, std::numeric_limits<int64_t>::min());
  model.symbolic.push_back(e);
  symbolic = symbolic || is_symbolic(e);
  return e.symbol < 0 ? e.add : e.mul * (*context.symbols)[static_cast<std::size_t>(e.symbol)].max + e.add;
}

void parse_int_payload(ValueModel& model, const Json& payload, const std::string& path, const ValueContext& context) {
  bool symbolic = false;
  if (model.kind == ValueKind::Int) {
    model.integer = parse_int_entry(payload, path, context, model, symbolic);
  } else {
    const Json::array_t& items = require_array(payload, path);
    model.list.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i)
      model.list.push_back(parse_int_entry(items[i], item_path(path, i), context, model, symbolic));
  }
  if (!symbolic) model.symbolic.clear();
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

void parse_payload(ValueModel& model, const Json& value, const std::string& path, const ValueContext& context) {
  const std::string value_path = field_path(path, "value");
  const Json& payload = require_key(value, "value", path);
  switch (model.kind) {
    case ValueKind::Int:
    case ValueKind::IntList: parse_int_payload(model, payload, value_path, context); break;
    case ValueKind::Double: model.real = require_number(payload, value_path); break;
    case ValueKind::Bool: model.integer = require_bool(payload, value_path) ? 1 : 0; break;
    case ValueKind::ScalarType: model.integer = static_cast<int64_t>(parse_dtype_field(payload, value_path)); break;
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

ValueModel parse_value(const Json& value, const std::string& path, const ValueContext& context) {
  require_object(value, path);
  ValueModel model;
  model.kind = parse_kind(value, path);
  if (model.kind == ValueKind::Tensor) model.tensor = parse_tensor(value, path, context);
  else if (model.kind != ValueKind::None) parse_payload(model, value, path, context);
  return model;
}

}  // namespace et_ops::runtime
