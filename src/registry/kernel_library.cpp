// The compiled part of the kernel-library kit (et_ops/kernel_library.h):
// the argument reader of every C-ABI call and KernelLibrary's records,
// fingerprints and messages, once in libet_ops instead of in every kernel
// library.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <string_view>

#include "et_ops/fingerprint.h"
#include "et_ops/kernel_library.h"
#include "et_ops/schema.h"

namespace et_ops {
namespace detail {
namespace {

const char* value_tag(int32_t tag) {
  switch (tag) {
    case ET_OPS_VALUE_NONE: return "none";
    case ET_OPS_VALUE_INT: return "an int";
    case ET_OPS_VALUE_DOUBLE: return "a double";
    case ET_OPS_VALUE_BOOL: return "a bool";
    case ET_OPS_VALUE_SCALAR_TYPE: return "a scalar type";
    case ET_OPS_VALUE_INT_LIST: return "an int list";
    case ET_OPS_VALUE_TENSOR: return "a tensor";
    case ET_OPS_VALUE_TENSOR_LIST: return "a tensor list";
    case ET_OPS_VALUE_STRING: return "a string";
    case ET_OPS_VALUE_OPTIONAL_TENSOR_LIST: return "an optional tensor list";
    default: return "an invalid value";
  }
}

// The operator a schema names, for messages.
std::string operator_of(const char* schema) {
  const std::string_view name = schema_operator_name(schema);
  return name.empty() ? std::string("kernel") : std::string(name);
}

// The name of argument i of a schema, for messages.
std::string argument_name_of(const char* schema, std::size_t i) {
  SchemaReader reader(schema);
  SchemaArgument argument;
  for (std::size_t position = 0; reader.next(argument); ++position)
    if (position == i) return std::string(argument.name);
  return "?";
}

// What is wrong with a tensor's description itself, or "" when nothing is:
// a dtype code outside the table, a rank beyond ET_OPS_MAX_DIMS, missing
// sizes or strides, a negative size, or a numel that is not the product of
// the sizes. Every kernel's memory arithmetic trusts these, so no kernel
// sees a tensor that fails here (data and layout are the kernel's to check).
std::string structure_fault(const et_ops_tensor& t) {
  if (!is_valid_dtype(t.dtype)) return "has an invalid dtype code " + std::to_string(t.dtype);
  if (t.dim < 0 || t.dim > ET_OPS_MAX_DIMS)
    return "has " + std::to_string(t.dim) + " dimensions; at most " + std::to_string(ET_OPS_MAX_DIMS) +
           " are supported";
  if (t.dim > 0 && (t.sizes == nullptr || t.strides == nullptr)) return "has no sizes or strides";
  int64_t product = 1;
  bool overflow = false;
  for (int32_t d = 0; d < t.dim; ++d) {
    if (t.sizes[d] < 0) return "has a negative size " + std::to_string(t.sizes[d]) + " in dimension " + std::to_string(d);
    overflow = overflow || (t.sizes[d] > 1 && product > std::numeric_limits<int64_t>::max() / t.sizes[d]);
    if (!overflow) product *= t.sizes[d];
  }
  if (overflow) return "has sizes whose product overflows";
  if (product != t.numel) {
    std::string sizes;
    for (int32_t d = 0; d < t.dim; ++d) sizes += (d > 0 ? ", " : "") + std::to_string(t.sizes[d]);
    return "has numel " + std::to_string(t.numel) + " but sizes [" + sizes + "] hold " + std::to_string(product) +
           " elements";
  }
  return {};
}

// What is wrong with a tensor list's elements, or "": a null element (unless
// the list is optional) or one whose description is inconsistent.
std::string list_fault(const et_ops_tensor_list& list, bool optional) {
  for (int64_t e = 0; e < list.size; ++e) {
    if (list.data[e] == nullptr) {
      if (optional) continue;
      return "holds a null tensor at " + std::to_string(e);
    }
    if (const std::string fault = structure_fault(*list.data[e]); !fault.empty())
      return "holds a tensor at " + std::to_string(e) + " that " + fault;
  }
  return {};
}

}  // namespace

ArgumentReader::ArgumentReader(et_ops_kernel_context* ctx, const char* schema, et_ops_value* const* args,
                               std::size_t count, std::size_t expected)
    : ctx_(KernelContext::from(ctx)), schema_(schema ? schema : ""), args_(args), count_(count) {
  // The schema is read only to name what is wrong, never on the way to a kernel.
  if (count != expected)
    ctx_.fail(operator_of(schema_) + ": expected " + std::to_string(expected) + " arguments, got " +
              std::to_string(count));
}

TensorRef ArgumentReader::tensor(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_TENSOR);
  if (v == nullptr || v->u.tensor == nullptr) {
    if (v != nullptr) fail(i, "is a null tensor");
    return TensorRef(placeholder_);
  }
  if (const std::string fault = structure_fault(*v->u.tensor); !fault.empty()) {
    fail(i, fault);
    return TensorRef(placeholder_);
  }
  return TensorRef(*v->u.tensor);
}

int64_t ArgumentReader::integer(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_INT);
  return v ? v->u.i : 0;
}

double ArgumentReader::floating(std::size_t i) {
  if (tag(i) == ET_OPS_VALUE_INT) return static_cast<double>(args_[i]->u.i);
  const et_ops_value* v = value(i, ET_OPS_VALUE_DOUBLE);
  return v ? v->u.d : 0.0;
}

bool ArgumentReader::boolean(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_BOOL);
  return v ? v->u.b != 0 : false;
}

DType ArgumentReader::scalar_type(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_SCALAR_TYPE);
  if (v == nullptr) return DType::Float32;
  if (v->u.scalar_type < 0 || v->u.scalar_type >= kDTypeCount) {
    fail(i, "is not a valid scalar type (" + std::to_string(v->u.scalar_type) + ")");
    return DType::Float32;
  }
  return static_cast<DType>(v->u.scalar_type);
}

IntList ArgumentReader::int_list(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_INT_LIST);
  if (v == nullptr) return IntList();
  if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
    fail(i, "is a malformed int list");
    return IntList();
  }
  return IntList(v->u.int_list);
}

TensorList ArgumentReader::tensor_list(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_TENSOR_LIST);
  if (v == nullptr) return TensorList();
  const et_ops_tensor_list& list = v->u.tensor_list;
  if (list.size < 0 || (list.size > 0 && list.data == nullptr)) {
    fail(i, "is a malformed tensor list");
    return TensorList();
  }
  if (const std::string fault = list_fault(list, false); !fault.empty()) {
    fail(i, fault);
    return TensorList();
  }
  return TensorList(list);
}

OptionalTensorList ArgumentReader::optional_tensor_list(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_OPTIONAL_TENSOR_LIST);
  if (v == nullptr) return OptionalTensorList();
  const et_ops_tensor_list& list = v->u.tensor_list;
  if (list.size < 0 || (list.size > 0 && list.data == nullptr)) {
    fail(i, "is a malformed optional tensor list");
    return OptionalTensorList();
  }
  if (const std::string fault = list_fault(list, true); !fault.empty()) {
    fail(i, fault);
    return OptionalTensorList();
  }
  return OptionalTensorList(list);
}

std::string_view ArgumentReader::string(std::size_t i) {
  const et_ops_value* v = value(i, ET_OPS_VALUE_STRING);
  if (v == nullptr) return {};
  if (v->u.string.size < 0 || (v->u.string.size > 0 && v->u.string.data == nullptr)) {
    fail(i, "is a malformed string");
    return {};
  }
  return std::string_view(v->u.string.data, static_cast<std::size_t>(v->u.string.size));
}

Scalar ArgumentReader::scalar(std::size_t i) {
  if (tag(i) == ET_OPS_VALUE_INT) return Scalar(args_[i]->u.i);
  return Scalar(floating(i));
}

void ArgumentReader::fail(std::size_t i, const std::string& what) {
  if (ctx_.ok())
    ctx_.fail(operator_of(schema_) + ": argument " + std::to_string(i) + " ('" + argument_name_of(schema_, i) + "') " +
              what);
}

const et_ops_value* ArgumentReader::value(std::size_t i, int32_t expected_tag) {
  if (!ctx_.ok()) return nullptr;
  if (tag(i) == -1) {
    fail(i, "is missing");
    return nullptr;
  }
  if (args_[i]->tag != expected_tag) {
    fail(i, std::string("must be ") + value_tag(expected_tag) + ", got " + value_tag(args_[i]->tag));
    return nullptr;
  }
  return args_[i];
}

}  // namespace detail

namespace {

std::string unfingerprinted_digest() {
  std::random_device random;
  std::string digest;
  for (int i = 0; i < 4; ++i) digest += std::to_string(random());
  return digest;
}

SchemaArgument argument_at(std::string_view schema, std::size_t i) {
  SchemaReader reader(schema);
  SchemaArgument argument;
  for (std::size_t position = 0; reader.next(argument); ++position)
    if (position == i) return argument;
  return SchemaArgument{};
}

std::string argument_name(std::string_view schema, std::size_t i) { return std::string(argument_at(schema, i).name); }
std::string argument_type(std::string_view schema, std::size_t i) { return std::string(argument_at(schema, i).type); }

// Why kernel k of library `component` cannot be registered (its schema or signature).
std::string signature_error(const std::string& component, const KernelDefinition& k) {
  const std::string_view schema = k.schema ? k.schema : "";
  std::string op(schema_operator_name(schema));
  if (op.empty()) op = "a kernel";
  std::string text = "kernel library " + component + ": " + op + ": ";
  const SignatureCheck& c = k.check;
  switch (c.problem) {
    case SignatureCheck::Problem::Schema:
      text += "the schema does not parse at offset " + std::to_string(c.argument) + ": " + c.schema_error +
              " (in \"" + std::string(schema) + "\")";
      break;
    case SignatureCheck::Problem::TooFewParameters:
      text += "the schema lists more arguments than the kernel takes: argument " + std::to_string(c.argument) +
              " ('" + argument_name(schema, c.argument) + "') has no parameter";
      break;
    case SignatureCheck::Problem::TooManyParameters:
      text += "the kernel takes more parameters than the schema lists arguments (" + std::to_string(c.argument) +
              "): its parameter " + std::to_string(c.argument + 1) + " (" + kernel_parameter_type(c.parameter_kind) +
              ") has no argument";
      break;
    case SignatureCheck::Problem::KindMismatch:
      text += "argument " + std::to_string(c.argument) + " ('" + argument_name(schema, c.argument) + "') is '" +
              argument_type(schema, c.argument) + "' in the schema, which takes " +
              kernel_parameter_type(c.schema_kind) + ", but the kernel's parameter " +
              std::to_string(c.argument + 1) + " is " + kernel_parameter_type(c.parameter_kind);
      break;
    case SignatureCheck::Problem::None: text += "the kernel has no function"; break;
  }
  return text;
}

}  // namespace

KernelLibrary::KernelLibrary(const char* component, const char* version, const KernelDefinition* kernels,
                             std::size_t count, const char* digest)
    : component_(component ? component : ""), version_(version ? version : ""), kernels_(kernels, kernels + count) {
  const std::string library_digest = digest != nullptr ? std::string(digest) : unfingerprinted_digest();
  for (const KernelDefinition& k : kernels_)
    if (!k.check.ok() || k.fn == nullptr) error_ += (error_.empty() ? "" : "\n") + signature_error(component_, k);
  if (ok()) {
    for (const KernelDefinition& k : kernels_) {
      const char* unset = nullptr;
      k.schema_slot->compare_exchange_strong(unset, k.schema);  // the first library to name fn wins
      names_.emplace_back(schema_operator_name(k.schema));
      fingerprints_.push_back((digest != nullptr ? "" : "unfingerprinted-") +
                              operator_fingerprint(library_digest, names_.back()));
    }
    // The records point into names_ and fingerprints_, complete by now.
    for (std::size_t i = 0; i < kernels_.size(); ++i)
      records_.push_back(et_ops_kernel_record{names_[i].c_str(), kernels_[i].key, kernels_[i].fn,
                                              kernels_[i].schema, fingerprints_[i].c_str()});
    for (std::size_t i = 0; i < kernels_.size(); ++i)
      if (kernels_[i].prepared != nullptr) has_prepared_ = true;
    // A library with prepared kernels needs version 2 records; one
    // without keeps the version 1 manifest that every registry reads.
    if (has_prepared_)
      for (std::size_t i = 0; i < kernels_.size(); ++i)
        records_v2_.push_back(et_ops_kernel_record_v2{
            records_[i], kernels_[i].prepared ? ET_OPS_KERNEL_PREPARED : ET_OPS_KERNEL_PLAIN, 0,
            kernels_[i].prepared});
  }
  if (has_prepared_)
    manifest_ = et_ops_manifest{ET_OPS_ABI_VERSION_PREPARED, sizeof(et_ops_kernel_record_v2), component_.c_str(),
                                version_.c_str(), &records_v2_.data()->base, records_v2_.size()};
  else
    manifest_ = et_ops_manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), component_.c_str(),
                                version_.c_str(), records_.data(), records_.size()};
}

RegistrationResult KernelLibrary::register_kernels() const {
  if (!ok()) return status();
  return registration_result(et_ops_register_manifest(&manifest_));
}

}  // namespace et_ops
