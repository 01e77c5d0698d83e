// Unpacking the et_ops_value arguments of a C-ABI kernel call into the
// parameters of a typed entry point, reporting a wrong argument count or
// kind through the context. Every kernel library's C-ABI kernels are made
// by abi_kernel<> from their typed entry points; nothing is unpacked by hand.
#ifndef ET_OPS_SRC_KERNELS_COMMON_ARGS_H
#define ET_OPS_SRC_KERNELS_COMMON_ARGS_H

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::detail {

// The name of argument `index` in an operator schema
// ("ns::op.overload(Tensor input, float scale, *, Tensor(a!) out) -> ..."),
// for messages; "?" if the schema has no such argument.
inline std::string schema_argument_name(std::string_view schema, std::size_t index) {
  const std::size_t open = schema.find('(');
  const std::size_t close = schema.rfind(") ->");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return "?";
  std::string_view rest = schema.substr(open + 1, close - open - 1);
  std::size_t position = 0;
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    std::string_view argument = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    argument = argument.substr(0, argument.find('='));  // drop a default value
    while (!argument.empty() && argument.front() == ' ') argument.remove_prefix(1);
    while (!argument.empty() && argument.back() == ' ') argument.remove_suffix(1);
    const std::size_t space = argument.rfind(' ');
    if (space == std::string_view::npos) continue;  // the keyword-only marker `*`
    if (position++ == index) return std::string(argument.substr(space + 1));
  }
  return "?";
}

// Reads argument i of an operator call. Every accessor reports a mismatch
// once, through the context, and returns a harmless placeholder; callers
// check ok() before running the kernel.
class ArgReader {
 public:
  ArgReader(et_ops_kernel_context* ctx, const char* op, const char* schema, et_ops_value* const* args,
            std::size_t count, std::size_t expected)
      : ctx_(KernelContext::from(ctx)), op_(op), schema_(schema), args_(args), count_(count) {
    if (count != expected) ctx_.fail(fmt::format("{}: expected {} arguments, got {}", op_, expected, count));
  }

  bool ok() const { return ctx_.ok(); }
  KernelContext& context() { return ctx_; }

  TensorRef tensor(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_TENSOR);
    if (v == nullptr || v->u.tensor == nullptr) {
      if (v != nullptr) ctx_.fail(fmt::format("{}: argument {} ('{}') is a null tensor", op_, i, name(i)));
      return TensorRef(placeholder_);
    }
    return TensorRef(*v->u.tensor);
  }

  int64_t integer(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_INT);
    return v ? v->u.i : 0;
  }

  // A schema `float` accepts a double value, or an int value (exact).
  double floating(std::size_t i) {
    if (tag(i) == ET_OPS_VALUE_INT) return static_cast<double>(args_[i]->u.i);
    const et_ops_value* v = arg(i, ET_OPS_VALUE_DOUBLE);
    return v ? v->u.d : 0.0;
  }

  bool boolean(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_BOOL);
    return v ? v->u.b != 0 : false;
  }

  DType scalar_type(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_SCALAR_TYPE);
    if (v == nullptr) return DType::Float32;
    if (v->u.scalar_type < 0 || v->u.scalar_type >= kDTypeCount) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is not a valid scalar type ({})", op_, i, name(i),
                            v->u.scalar_type));
      return DType::Float32;
    }
    return static_cast<DType>(v->u.scalar_type);
  }

  et_ops_int_list int_list(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_INT_LIST);
    if (v == nullptr) return et_ops_int_list{nullptr, 0};
    if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is a malformed int list", op_, i, name(i)));
      return et_ops_int_list{nullptr, 0};
    }
    return v->u.int_list;
  }

  TensorList tensor_list(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_TENSOR_LIST);
    if (v == nullptr) return TensorList();
    const et_ops_tensor_list& list = v->u.tensor_list;
    if (list.size < 0 || (list.size > 0 && list.data == nullptr)) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is a malformed tensor list", op_, i, name(i)));
      return TensorList();
    }
    for (int64_t e = 0; e < list.size; ++e) {
      if (list.data[e] == nullptr) {
        ctx_.fail(fmt::format("{}: argument {} ('{}') holds a null tensor at {}", op_, i, name(i), e));
        return TensorList();
      }
    }
    return TensorList(list);
  }

  // The tag of argument i, or -1 when it is missing.
  int32_t tag(std::size_t i) const { return i < count_ && args_[i] != nullptr ? args_[i]->tag : -1; }
  bool is_none(std::size_t i) const { return tag(i) == ET_OPS_VALUE_NONE; }

 private:
  const et_ops_value* arg(std::size_t i, int32_t expected_tag) {
    if (!ctx_.ok()) return nullptr;
    if (tag(i) == -1) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') is missing", op_, i, name(i)));
      return nullptr;
    }
    if (args_[i]->tag != expected_tag) {
      ctx_.fail(fmt::format("{}: argument {} ('{}') must be {}, got {}", op_, i, name(i), value_tag(expected_tag),
                            value_tag(args_[i]->tag)));
      return nullptr;
    }
    return args_[i];
  }

  std::string name(std::size_t i) const { return schema_argument_name(schema_, i); }

  static const char* value_tag(int32_t tag) {
    switch (tag) {
      case ET_OPS_VALUE_NONE: return "none";
      case ET_OPS_VALUE_INT: return "an int";
      case ET_OPS_VALUE_DOUBLE: return "a double";
      case ET_OPS_VALUE_BOOL: return "a bool";
      case ET_OPS_VALUE_SCALAR_TYPE: return "a scalar type";
      case ET_OPS_VALUE_INT_LIST: return "an int list";
      case ET_OPS_VALUE_TENSOR: return "a tensor";
      case ET_OPS_VALUE_TENSOR_LIST: return "a tensor list";
      default: return "an invalid value";
    }
  }

  KernelContext& ctx_;
  const char* op_;
  const char* schema_;
  et_ops_value* const* args_;
  std::size_t count_;
  et_ops_tensor placeholder_{nullptr, nullptr, nullptr, nullptr, 0, ET_OPS_DTYPE_FLOAT32, 0};
};

// How argument i is read as the entry point's parameter type P. A library
// with parameter types of its own (aten's Scalar, say) specialises it.
template <typename P>
struct ArgAs;

template <>
struct ArgAs<TensorRef> {
  static TensorRef read(ArgReader& a, std::size_t i) { return a.tensor(i); }
};
template <>
struct ArgAs<TensorList> {
  static TensorList read(ArgReader& a, std::size_t i) { return a.tensor_list(i); }
};
template <>
struct ArgAs<int64_t> {
  static int64_t read(ArgReader& a, std::size_t i) { return a.integer(i); }
};
template <>
struct ArgAs<double> {
  static double read(ArgReader& a, std::size_t i) { return a.floating(i); }
};
template <>
struct ArgAs<bool> {
  static bool read(ArgReader& a, std::size_t i) { return a.boolean(i); }
};
template <>
struct ArgAs<DType> {
  static DType read(ArgReader& a, std::size_t i) { return a.scalar_type(i); }
};
// An optional schema argument (`Tensor?`, `int?`, `float?`, `ScalarType?`,
// and a library's own types such as `Scalar?` or `int[1]?`) is a none
// value or the value itself.
template <typename T>
struct ArgAs<std::optional<T>> {
  static std::optional<T> read(ArgReader& a, std::size_t i) {
    if (a.is_none(i)) return std::nullopt;
    return ArgAs<T>::read(a, i);
  }
};

template <typename... P, std::size_t... I>
void unpack_and_call(bool (*kernel)(KernelContext&, P...), ArgReader& a, std::index_sequence<I...>) {
  // Braced initialisation reads the arguments in order, so the first bad
  // one is the one reported.
  std::tuple<P...> values{ArgAs<P>::read(a, I)...};
  if (a.ok()) kernel(a.context(), std::get<I>(values)...);
}

template <typename Operator, typename... P>
void call_from_abi(bool (*kernel)(KernelContext&, P...), et_ops_kernel_context* ctx, et_ops_value* const* args,
                   std::size_t count) {
  ArgReader a(ctx, Operator::kName, Operator::kSchema, args, count, sizeof...(P));
  if (a.ok()) unpack_and_call(kernel, a, std::index_sequence_for<P...>{});
}

// The C-ABI kernel of a typed entry point `Kernel`, whose parameters after
// the context are the schema's arguments in order. `Operator` carries the
// operator's kName and kSchema.
template <typename Operator, auto Kernel>
void abi_kernel(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t count) {
  call_from_abi<Operator>(Kernel, ctx, args, count);
}

}  // namespace et_ops::kernels::detail

#endif  // ET_OPS_SRC_KERNELS_COMMON_ARGS_H
