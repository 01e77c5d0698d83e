// How the kit maps a schema to a typed kernel (et_ops/kernel_library.h):
// the parameter type of each schema argument, the compile-time signature
// check, and the C-ABI kernel that unpacks a call into the typed function.
#ifndef ET_OPS_DETAIL_KERNEL_SIGNATURE_H
#define ET_OPS_DETAIL_KERNEL_SIGNATURE_H

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "et_ops/abi.h"
#include "et_ops/detail/argument_reader.h"
#include "et_ops/dtype.h"
#include "et_ops/int_list.h"
#include "et_ops/kernel_context.h"
#include "et_ops/scalar.h"
#include "et_ops/schema.h"
#include "et_ops/tensor.h"

namespace et_ops {

// How a schema argument arrives as a C++ parameter: one specialisation per
// parameter type, with the schema kind it stands for and how it is read.
template <typename T>
struct KernelArgument;  // no mapping: see the static_assert in kernel<>()

namespace detail {

// The optional kind of a kind that has one.
constexpr ArgumentKind optional_kind(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::Tensor: return ArgumentKind::OptionalTensor;
    case ArgumentKind::Int: return ArgumentKind::OptionalInt;
    case ArgumentKind::IntList: return ArgumentKind::OptionalIntList;
    case ArgumentKind::Float: return ArgumentKind::OptionalFloat;
    case ArgumentKind::Bool: return ArgumentKind::OptionalBool;
    case ArgumentKind::Scalar: return ArgumentKind::OptionalScalar;
    case ArgumentKind::ScalarType: return ArgumentKind::OptionalScalarType;
    default: return ArgumentKind::Other;
  }
}

template <typename T, typename = void>
struct is_kernel_argument : std::false_type {};
template <typename T>
struct is_kernel_argument<T, std::void_t<decltype(KernelArgument<T>::kind)>> : std::true_type {};

}  // namespace detail


// ---- the type mapping ----

namespace detail {
// A parameter type read by one ArgumentReader call.
template <typename T, ArgumentKind Kind, T (ArgumentReader::*Read)(std::size_t)>
struct ReadArgument {
  static constexpr ArgumentKind kind = Kind;
  static T read(ArgumentReader& a, std::size_t i) { return (a.*Read)(i); }
};
}  // namespace detail

#define ET_OPS_KERNEL_ARGUMENT(TYPE, KIND, READ) \
  template <>                                     \
  struct KernelArgument<TYPE> : detail::ReadArgument<TYPE, ArgumentKind::KIND, &detail::ArgumentReader::READ> {}
ET_OPS_KERNEL_ARGUMENT(TensorRef, Tensor, tensor);
ET_OPS_KERNEL_ARGUMENT(TensorList, TensorList, tensor_list);
ET_OPS_KERNEL_ARGUMENT(OptionalTensorList, OptionalTensorList, optional_tensor_list);
ET_OPS_KERNEL_ARGUMENT(std::string_view, String, string);
ET_OPS_KERNEL_ARGUMENT(int64_t, Int, integer);
ET_OPS_KERNEL_ARGUMENT(IntList, IntList, int_list);
ET_OPS_KERNEL_ARGUMENT(double, Float, floating);
ET_OPS_KERNEL_ARGUMENT(bool, Bool, boolean);
ET_OPS_KERNEL_ARGUMENT(Scalar, Scalar, scalar);
ET_OPS_KERNEL_ARGUMENT(DType, ScalarType, scalar_type);
#undef ET_OPS_KERNEL_ARGUMENT

// Optional arguments: none, or the value of the type inside.
template <typename T>
struct KernelArgument<std::optional<T>> {
  static constexpr ArgumentKind kind = detail::optional_kind(KernelArgument<T>::kind);
  static std::optional<T> read(detail::ArgumentReader& a, std::size_t i) {
    if (a.is_none(i)) return std::nullopt;
    return KernelArgument<T>::read(a, i);
  }
};

// The C++ parameter type that stands for a schema kind.
constexpr const char* kernel_parameter_type(ArgumentKind kind) {
  switch (kind) {
    case ArgumentKind::Tensor: return "et_ops::TensorRef";
    case ArgumentKind::OptionalTensor: return "std::optional<et_ops::TensorRef>";
    case ArgumentKind::TensorList: return "et_ops::TensorList";
    case ArgumentKind::Int: return "int64_t";
    case ArgumentKind::OptionalInt: return "std::optional<int64_t>";
    case ArgumentKind::IntList: return "et_ops::IntList";
    case ArgumentKind::OptionalIntList: return "std::optional<et_ops::IntList>";
    case ArgumentKind::Float: return "double";
    case ArgumentKind::OptionalFloat: return "std::optional<double>";
    case ArgumentKind::Bool: return "bool";
    case ArgumentKind::OptionalBool: return "std::optional<bool>";
    case ArgumentKind::Scalar: return "et_ops::Scalar";
    case ArgumentKind::OptionalScalar: return "std::optional<et_ops::Scalar>";
    case ArgumentKind::ScalarType: return "et_ops::DType";
    case ArgumentKind::OptionalScalarType: return "std::optional<et_ops::DType>";
    case ArgumentKind::String: return "std::string_view";
    case ArgumentKind::OptionalTensorList: return "et_ops::OptionalTensorList";
    case ArgumentKind::Other: break;
  }
  return "no parameter type (the kit does not map this schema type)";
}

// What kernel<&fn>() found when it compared fn's parameters with the schema.
struct SignatureCheck {
  enum class Problem : uint8_t { None, Schema, TooFewParameters, TooManyParameters, KindMismatch };
  Problem problem = Problem::None;
  std::size_t argument = 0;  // the schema argument concerned (for Schema: the offset of the error)
  ArgumentKind schema_kind = ArgumentKind::Other;
  ArgumentKind parameter_kind = ArgumentKind::Other;
  const char* schema_error = nullptr;
  constexpr bool ok() const { return problem == Problem::None; }
};

// One kernel of a library: what et_ops::kernel<&fn>(schema) makes.
struct KernelDefinition {
  const char* schema = nullptr;
  const char* key = "";  // "" for the fallback kernel, else a KernelKey text
  et_ops_kernel_fn fn = nullptr;
  SignatureCheck check;
  std::atomic<const char*>* schema_slot = nullptr;  // where fn's C-ABI kernel finds its schema
  const et_ops_prepared_kernel* prepared = nullptr;  // prepared_kernel<>(): its load-time and run functions
};

namespace detail {

template <typename F>
struct KernelSignature {
  static constexpr bool valid = false;
};
template <typename... P>
struct KernelSignature<bool (*)(KernelContext&, P...)> {
  static constexpr bool valid = true;
  static constexpr std::size_t count = sizeof...(P);
  static constexpr bool arguments_mapped = (is_kernel_argument<P>::value && ...);
};

template <typename P>
constexpr ArgumentKind parameter_kind() {
  if constexpr (is_kernel_argument<P>::value) return KernelArgument<P>::kind;
  else return ArgumentKind::Other;
}
template <typename... P>
constexpr SignatureCheck check_signature(bool (*)(KernelContext&, P...), std::string_view schema) {
  constexpr std::array<ArgumentKind, sizeof...(P) + 1> kinds{parameter_kind<P>()..., ArgumentKind::Other};
  SignatureCheck check;
  SchemaReader reader(schema);
  SchemaArgument argument;
  std::size_t i = 0;
  while (reader.next(argument)) {
    if (i == sizeof...(P)) {
      check.problem = SignatureCheck::Problem::TooFewParameters;
      check.argument = i;
      check.schema_kind = argument.kind;
      return check;
    }
    if (argument.kind == ArgumentKind::Other || argument.kind != kinds[i]) {
      check.problem = SignatureCheck::Problem::KindMismatch;
      check.argument = i;
      check.schema_kind = argument.kind;
      check.parameter_kind = kinds[i];
      return check;
    }
    ++i;
  }
  if (!reader.ok()) {
    check.problem = SignatureCheck::Problem::Schema;
    check.schema_error = reader.error();
    check.argument = reader.error_offset();
  } else if (i < sizeof...(P)) {
    check.problem = SignatureCheck::Problem::TooManyParameters;
    check.argument = i;
    check.parameter_kind = kinds[i];
  }
  return check;
}

// Where the C-ABI kernel of Fn finds its schema (for the names in its
// messages); set when a KernelLibrary is built.
template <auto Fn>
inline std::atomic<const char*> kernel_schema{nullptr};

template <auto Fn, typename... P, std::size_t... I>
void unpack_and_call(bool (*)(KernelContext&, P...), ArgumentReader& a, std::index_sequence<I...>) {
  // Braced initialisation reads the arguments in order, so the first bad
  // one is the one reported.
  std::tuple<P...> values{KernelArgument<P>::read(a, I)...};
  if (a.ok()) Fn(a.context(), std::get<I>(values)...);
}

// The C-ABI kernel of a typed kernel Fn.
template <auto Fn>
void abi_kernel(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t count) {
  ArgumentReader a(ctx, kernel_schema<Fn>.load(std::memory_order_acquire), args, count,
                   KernelSignature<decltype(Fn)>::count);
  if (a.ok()) unpack_and_call<Fn>(Fn, a, std::make_index_sequence<KernelSignature<decltype(Fn)>::count>{});
}

// Called only when a signature check fails: in a constant expression
// (a constexpr KernelDefinition) that makes the mismatch a compile error
// naming this function; at run time it does nothing and KernelLibrary
// reports the mismatch from register_kernels().
inline void kernel_signature_does_not_match_its_schema() {}

}  // namespace detail
}  // namespace et_ops

#endif  // ET_OPS_DETAIL_KERNEL_SIGNATURE_H
