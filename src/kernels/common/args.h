// Unpacking the et_ops_value arguments of a C-ABI kernel call into typed
// values, reporting a wrong argument count or kind through the context.
// Every kernel library's C-ABI wrappers use this one helper.
#ifndef ET_OPS_SRC_KERNELS_COMMON_ARGS_H
#define ET_OPS_SRC_KERNELS_COMMON_ARGS_H

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::detail {

// Reads argument i of an operator call. Every accessor reports a mismatch
// once, through the context, and returns a harmless placeholder; callers
// check ctx.ok() before running the kernel.
class ArgReader {
 public:
  ArgReader(et_ops_kernel_context* ctx, const char* op, et_ops_value* const* args, std::size_t count,
            std::size_t expected)
      : ctx_(KernelContext::from(ctx)), op_(op), args_(args), count_(count) {
    if (count != expected)
      ctx_.fail(fmt::format("{}: expected {} arguments, got {}", op_, expected, count));
  }

  bool ok() const { return ctx_.ok(); }
  KernelContext& context() { return ctx_; }

  TensorRef tensor(std::size_t i, const char* name) {
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_TENSOR);
    if (v == nullptr || v->u.tensor == nullptr) {
      if (v != nullptr) ctx_.fail(fmt::format("{}: argument {} ('{}') is a null tensor", op_, i, name));
      return TensorRef(placeholder_);
    }
    return TensorRef(*v->u.tensor);
  }

  std::optional<TensorRef> optional_tensor(std::size_t i, const char* name) {
    if (is_none(i)) return std::nullopt;
    return tensor(i, name);
  }

  int64_t integer(std::size_t i, const char* name) {
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_INT);
    return v ? v->u.i : 0;
  }

  // A schema `float` accepts a double value, or an int value (exact).
  double floating(std::size_t i, const char* name) {
    if (i < count_ && args_[i] != nullptr && args_[i]->tag == ET_OPS_VALUE_INT)
      return static_cast<double>(args_[i]->u.i);
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_DOUBLE);
    return v ? v->u.d : 0.0;
  }

  bool boolean(std::size_t i, const char* name) {
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_BOOL);
    return v ? v->u.b != 0 : false;
  }

  DType scalar_type(std::size_t i, const char* name) {
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_SCALAR_TYPE);
    if (v == nullptr) return DType::Float32;
    if (v->u.scalar_type < 0 || v->u.scalar_type >= kDTypeCount) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is not a valid scalar type ({})", op_, i, name,
                            v->u.scalar_type));
      return DType::Float32;
    }
    return static_cast<DType>(v->u.scalar_type);
  }

  std::optional<DType> optional_scalar_type(std::size_t i, const char* name) {
    if (is_none(i)) return std::nullopt;
    return scalar_type(i, name);
  }

  et_ops_int_list int_list(std::size_t i, const char* name) {
    const et_ops_value* v = arg(i, name, ET_OPS_VALUE_INT_LIST);
    if (v == nullptr) return et_ops_int_list{nullptr, 0};
    if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is a malformed int list", op_, i, name));
      return et_ops_int_list{nullptr, 0};
    }
    return v->u.int_list;
  }

  bool is_none(std::size_t i) const {
    return i < count_ && args_[i] != nullptr && args_[i]->tag == ET_OPS_VALUE_NONE;
  }

 private:
  const et_ops_value* arg(std::size_t i, const char* name, int32_t tag) {
    if (!ctx_.ok()) return nullptr;
    if (i >= count_ || args_[i] == nullptr) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is missing", op_, i, name));
      return nullptr;
    }
    if (args_[i]->tag != tag) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') must be {}, got {}", op_, i, name, value_tag(tag),
                            value_tag(args_[i]->tag)));
      return nullptr;
    }
    return args_[i];
  }

  static const char* value_tag(int32_t tag) {
    switch (tag) {
      case ET_OPS_VALUE_NONE: return "none";
      case ET_OPS_VALUE_INT: return "an int";
      case ET_OPS_VALUE_DOUBLE: return "a double";
      case ET_OPS_VALUE_BOOL: return "a bool";
      case ET_OPS_VALUE_SCALAR_TYPE: return "a scalar type";
      case ET_OPS_VALUE_INT_LIST: return "an int list";
      case ET_OPS_VALUE_TENSOR: return "a tensor";
      default: return "an invalid value";
    }
  }

  KernelContext& ctx_;
  const char* op_;
  et_ops_value* const* args_;
  std::size_t count_;
  et_ops_tensor placeholder_{nullptr, nullptr, nullptr, nullptr, 0, ET_OPS_DTYPE_FLOAT32, 0};
};

}  // namespace et_ops::kernels::detail

#endif  // ET_OPS_SRC_KERNELS_COMMON_ARGS_H
