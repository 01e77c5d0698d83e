// Operator arguments: constructors for et_ops_value and a typed way to call a
// C-ABI kernel with a list of them.
#ifndef ET_OPS_VALUE_H
#define ET_OPS_VALUE_H

#include <cstdint>
#include <string_view>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops {

inline et_ops_value none_value() {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_NONE;
  return v;
}
inline et_ops_value int_value(int64_t i) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_INT;
  v.u.i = i;
  return v;
}
inline et_ops_value double_value(double d) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
inline et_ops_value bool_value(bool b) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_BOOL;
  v.u.b = b ? 1 : 0;
  return v;
}
inline et_ops_value scalar_type_value(DType t) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_SCALAR_TYPE;
  v.u.scalar_type = static_cast<int64_t>(t);
  return v;
}
inline et_ops_value int_list_value(const int64_t* data, int64_t size) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_INT_LIST;
  v.u.int_list.data = data;
  v.u.int_list.size = size;
  return v;
}
inline et_ops_value tensor_value(et_ops_tensor* t) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
inline et_ops_value tensor_value(Tensor& t) { return tensor_value(t.raw()); }
inline et_ops_value tensor_list_value(et_ops_tensor* const* data, int64_t size) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_TENSOR_LIST;
  v.u.tensor_list.data = data;
  v.u.tensor_list.size = size;
  return v;
}

// `text` must outlive the call it is passed to.
inline et_ops_value string_value(std::string_view text) {
  et_ops_value v{};
  v.tag = ET_OPS_VALUE_STRING;
  v.u.string.data = text.data();
  v.u.string.size = static_cast<int64_t>(text.size());
  return v;
}
// A `Tensor?[]` argument: null elements are None.
inline et_ops_value optional_tensor_list_value(et_ops_tensor* const* data, int64_t size) {
  et_ops_value v = tensor_list_value(data, size);
  v.tag = ET_OPS_VALUE_OPTIONAL_TENSOR_LIST;
  return v;
}

inline const char* value_tag_name(int32_t tag) {
  switch (tag) {
    case ET_OPS_VALUE_NONE: return "none";
    case ET_OPS_VALUE_INT: return "int";
    case ET_OPS_VALUE_DOUBLE: return "double";
    case ET_OPS_VALUE_BOOL: return "bool";
    case ET_OPS_VALUE_SCALAR_TYPE: return "scalar_type";
    case ET_OPS_VALUE_INT_LIST: return "int_list";
    case ET_OPS_VALUE_TENSOR: return "tensor";
    case ET_OPS_VALUE_TENSOR_LIST: return "tensor_list";
    case ET_OPS_VALUE_STRING: return "string";
    case ET_OPS_VALUE_OPTIONAL_TENSOR_LIST: return "optional_tensor_list";
    default: return "invalid";
  }
}

// Calls `fn` with `args` (schema order, out arguments last). Returns the
// context so the caller can check ok() and message().
inline KernelContext call_kernel(et_ops_kernel_fn fn, std::vector<et_ops_value>& args) {
  std::vector<et_ops_value*> pointers;
  pointers.reserve(args.size());
  for (auto& a : args) pointers.push_back(&a);
  KernelContext context;
  fn(context.raw(), pointers.data(), pointers.size());
  return context;
}

}  // namespace et_ops

#endif  // ET_OPS_VALUE_H
