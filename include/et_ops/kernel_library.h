// The kit for writing a kernel library: header-only, over libet_ops.
//
//   bool scale_out(et_ops::KernelContext& ctx, et_ops::TensorRef self, double factor, et_ops::TensorRef out);
//
//   const et_ops::KernelLibrary& library() {
//     static const et_ops::KernelLibrary instance("acme_kernels", "1.2.0", {
//         et_ops::kernel<&scale_out>("acme::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)"),
//     });
//     return instance;
//   }
//   ET_OPS_LOADABLE_KERNEL_LIBRARY(library)
//
// et_ops::kernel<&fn>(schema) takes the operator name from the schema and
// makes the C-ABI kernel that unpacks the call's arguments into fn's typed
// parameters: KernelContext& first, then one parameter per schema argument
// in order, out arguments last; fn returns ctx.ok(). A signature that does
// not match its schema is a compile error when the definition is a constant
// expression (constexpr), else an error from register_kernels() naming the
// operator and the argument.
#ifndef ET_OPS_KERNEL_LIBRARY_H
#define ET_OPS_KERNEL_LIBRARY_H

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/fingerprint.h"
#include "et_ops/int_list.h"
#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
#include "et_ops/scalar.h"
#include "et_ops/schema.h"
#include "et_ops/status.h"
#include "et_ops/tensor.h"

// The build helpers (et-ops-fingerprint; et_ops_fingerprint() in CMake)
// generate a header that defines ET_OPS_KERNEL_LIBRARY_DIGEST, the digest of
// the library's sources and numerics-relevant compiler settings, and name it
// in ET_OPS_KERNEL_LIBRARY_DIGEST_HEADER.
#if defined(ET_OPS_KERNEL_LIBRARY_DIGEST_HEADER)
#include ET_OPS_KERNEL_LIBRARY_DIGEST_HEADER
#endif
#if defined(ET_OPS_KERNEL_LIBRARY_DIGEST)
#define ET_OPS_DETAIL_LIBRARY_DIGEST ET_OPS_KERNEL_LIBRARY_DIGEST
#else
#define ET_OPS_DETAIL_LIBRARY_DIGEST nullptr
#endif

namespace et_ops {

// What a run passes to a prepared kernel: thread_count, and the run
// state's thread pool (a pthreadpool_t, NULL for one thread).
using RunEnvironment = et_ops_run_environment;

// How a schema argument arrives as a C++ parameter: one specialisation per
// parameter type, with the schema kind it stands for and how it is read.
template <typename T>
struct KernelArgument;  // no mapping: see the static_assert in kernel<>()

namespace detail {

// Reads argument i of a C-ABI call. Every accessor reports a mismatch once,
// through the context, naming the operator and the argument, and returns a
// harmless placeholder; the kernel runs only when every argument was read.
class ArgumentReader {
 public:
  ArgumentReader(et_ops_kernel_context* ctx, const char* schema, et_ops_value* const* args, std::size_t count,
                 std::size_t expected)
      : ctx_(KernelContext::from(ctx)), schema_(schema ? schema : ""), args_(args), count_(count) {
    // The schema is read only to name what is wrong, never on the way to a kernel.
    if (count != expected)
      ctx_.fail(op() + ": expected " + std::to_string(expected) + " arguments, got " + std::to_string(count));
  }

  bool ok() const { return ctx_.ok(); }
  KernelContext& context() { return ctx_; }

  // The tag of argument i, or -1 when it is missing.
  int32_t tag(std::size_t i) const { return i < count_ && args_[i] != nullptr ? args_[i]->tag : -1; }
  bool is_none(std::size_t i) const { return tag(i) == ET_OPS_VALUE_NONE; }

  TensorRef tensor(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_TENSOR);
    if (v == nullptr || v->u.tensor == nullptr) {
      if (v != nullptr) fail(i, "is a null tensor");
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
      fail(i, "is not a valid scalar type (" + std::to_string(v->u.scalar_type) + ")");
      return DType::Float32;
    }
    return static_cast<DType>(v->u.scalar_type);
  }

  IntList int_list(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_INT_LIST);
    if (v == nullptr) return IntList();
    if (v->u.int_list.size < 0 || (v->u.int_list.size > 0 && v->u.int_list.data == nullptr)) {
      fail(i, "is a malformed int list");
      return IntList();
    }
    return IntList(v->u.int_list);
  }

  TensorList tensor_list(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_TENSOR_LIST);
    if (v == nullptr) return TensorList();
    const et_ops_tensor_list& list = v->u.tensor_list;
    if (list.size < 0 || (list.size > 0 && list.data == nullptr)) {
      fail(i, "is a malformed tensor list");
      return TensorList();
    }
    for (int64_t e = 0; e < list.size; ++e)
      if (list.data[e] == nullptr) {
        fail(i, "holds a null tensor at " + std::to_string(e));
        return TensorList();
      }
    return TensorList(list);
  }

  // A `Tensor?[]`: like a tensor list, but a null element is None.
  OptionalTensorList optional_tensor_list(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_OPTIONAL_TENSOR_LIST);
    if (v == nullptr) return OptionalTensorList();
    const et_ops_tensor_list& list = v->u.tensor_list;
    if (list.size < 0 || (list.size > 0 && list.data == nullptr)) {
      fail(i, "is a malformed optional tensor list");
      return OptionalTensorList();
    }
    return OptionalTensorList(list);
  }

  std::string_view string(std::size_t i) {
    const et_ops_value* v = arg(i, ET_OPS_VALUE_STRING);
    if (v == nullptr) return {};
    if (v->u.string.size < 0 || (v->u.string.size > 0 && v->u.string.data == nullptr)) {
      fail(i, "is a malformed string");
      return {};
    }
    return std::string_view(v->u.string.data, static_cast<std::size_t>(v->u.string.size));
  }

  // An aten Scalar arrives as an int or a double value; which one matters.
  Scalar scalar(std::size_t i) {
    if (tag(i) == ET_OPS_VALUE_INT) return Scalar(args_[i]->u.i);
    return Scalar(floating(i));
  }

  // Reports argument i as wrong: "<op>: argument <i> ('<name>') <what>".
  void fail(std::size_t i, const std::string& what) {
    if (ctx_.ok()) ctx_.fail(op() + ": argument " + std::to_string(i) + " ('" + name(i) + "') " + what);
  }

 private:
  const et_ops_value* arg(std::size_t i, int32_t expected_tag) {
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

  std::string op() const {
    const std::string_view name = schema_operator_name(schema_);
    return name.empty() ? std::string("kernel") : std::string(name);
  }

  std::string name(std::size_t i) const {
    SchemaReader reader(schema_);
    SchemaArgument argument;
    for (std::size_t position = 0; reader.next(argument); ++position)
      if (position == i) return std::string(argument.name);
    return "?";
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
      case ET_OPS_VALUE_TENSOR_LIST: return "a tensor list";
      case ET_OPS_VALUE_STRING: return "a string";
      case ET_OPS_VALUE_OPTIONAL_TENSOR_LIST: return "an optional tensor list";
      default: return "an invalid value";
    }
  }

  KernelContext& ctx_;
  const char* schema_;
  et_ops_value* const* args_;
  std::size_t count_;
  et_ops_tensor placeholder_{nullptr, nullptr, nullptr, nullptr, 0, ET_OPS_DTYPE_FLOAT32, 0};
};

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

template <>
struct KernelArgument<TensorRef> {
  static constexpr ArgumentKind kind = ArgumentKind::Tensor;
  static TensorRef read(detail::ArgumentReader& a, std::size_t i) { return a.tensor(i); }
};
template <>
struct KernelArgument<TensorList> {
  static constexpr ArgumentKind kind = ArgumentKind::TensorList;
  static TensorList read(detail::ArgumentReader& a, std::size_t i) { return a.tensor_list(i); }
};
template <>
struct KernelArgument<OptionalTensorList> {
  static constexpr ArgumentKind kind = ArgumentKind::OptionalTensorList;
  static OptionalTensorList read(detail::ArgumentReader& a, std::size_t i) { return a.optional_tensor_list(i); }
};
template <>
struct KernelArgument<std::string_view> {
  static constexpr ArgumentKind kind = ArgumentKind::String;
  static std::string_view read(detail::ArgumentReader& a, std::size_t i) { return a.string(i); }
};
template <>
struct KernelArgument<int64_t> {
  static constexpr ArgumentKind kind = ArgumentKind::Int;
  static int64_t read(detail::ArgumentReader& a, std::size_t i) { return a.integer(i); }
};
template <>
struct KernelArgument<IntList> {
  static constexpr ArgumentKind kind = ArgumentKind::IntList;
  static IntList read(detail::ArgumentReader& a, std::size_t i) { return a.int_list(i); }
};
template <>
struct KernelArgument<double> {
  static constexpr ArgumentKind kind = ArgumentKind::Float;
  static double read(detail::ArgumentReader& a, std::size_t i) { return a.floating(i); }
};
template <>
struct KernelArgument<bool> {
  static constexpr ArgumentKind kind = ArgumentKind::Bool;
  static bool read(detail::ArgumentReader& a, std::size_t i) { return a.boolean(i); }
};
template <>
struct KernelArgument<Scalar> {
  static constexpr ArgumentKind kind = ArgumentKind::Scalar;
  static Scalar read(detail::ArgumentReader& a, std::size_t i) { return a.scalar(i); }
};
template <>
struct KernelArgument<DType> {
  static constexpr ArgumentKind kind = ArgumentKind::ScalarType;
  static DType read(detail::ArgumentReader& a, std::size_t i) { return a.scalar_type(i); }
};
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

// ---- prepared kernels ----

template <typename F>
struct PrepareSignature {
  static constexpr bool valid = false;
};
template <typename S, typename... P>
struct PrepareSignature<std::unique_ptr<S> (*)(KernelContext&, P...)> {
  static constexpr bool valid = true;
  static constexpr std::size_t count = sizeof...(P);
  static constexpr bool arguments_mapped = (is_kernel_argument<P>::value && ...);
  using State = S;
  using Parameters = std::tuple<P...>;
  // The same argument check as a plain kernel bool(KernelContext&, P...).
  static constexpr SignatureCheck check(std::string_view schema) {
    return check_signature(static_cast<bool (*)(KernelContext&, P...)>(nullptr), schema);
  }
};

template <typename F>
struct InstantiateSignature {
  static constexpr bool valid = false;
};
template <typename I, typename S, typename... P>
struct InstantiateSignature<std::unique_ptr<I> (*)(KernelContext&, const S&, P...)> {
  static constexpr bool valid = true;
  using Instance = I;
  using State = S;
  using Parameters = std::tuple<P...>;
};

template <typename F>
struct RunSignature {
  static constexpr bool valid = false;
};
template <typename S, typename... P>
struct RunSignature<bool (*)(KernelContext&, const S&, const RunEnvironment&, P...)> {
  static constexpr bool valid = true;
  static constexpr bool has_instance = false;
  using Instance = void;
  using State = S;
  using Parameters = std::tuple<P...>;
};
template <typename S, typename I, typename... P>
struct RunSignature<bool (*)(KernelContext&, const S&, I&, const RunEnvironment&, P...)> {
  static constexpr bool valid = true;
  static constexpr bool has_instance = true;
  using Instance = I;
  using State = S;
  using Parameters = std::tuple<P...>;
};

// Reads a call's arguments as the typed parameters P..., in order (the
// first bad one is the one reported).
template <typename... P, std::size_t... I>
std::tuple<P...> read_arguments(std::tuple<P...>*, ArgumentReader& a, std::index_sequence<I...>) {
  return std::tuple<P...>{KernelArgument<P>::read(a, I)...};
}
template <typename Parameters>
Parameters read_all(ArgumentReader& a) {
  return read_arguments(static_cast<Parameters*>(nullptr), a,
                        std::make_index_sequence<std::tuple_size<Parameters>::value>{});
}

// The C-ABI functions of prepared_kernel<Prepare, Instantiate, Run>; the
// schema slot is Prepare's. Instantiate is nullptr when the kernel has no
// per-run-state part.
template <auto Prepare, auto Instantiate, auto Run>
struct PreparedAbi {
  using Prep = PrepareSignature<decltype(Prepare)>;
  using State = typename Prep::State;
  using Parameters = typename Prep::Parameters;
  using Instance = typename RunSignature<decltype(Run)>::Instance;
  static constexpr std::size_t count = Prep::count;

  static ArgumentReader reader(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t n) {
    return ArgumentReader(ctx, kernel_schema<Prepare>.load(std::memory_order_acquire), args, n, count);
  }

  static void* prepare(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t n) {
    ArgumentReader a = reader(ctx, args, n);
    if (!a.ok()) return nullptr;
    Parameters values = read_all<Parameters>(a);
    if (!a.ok()) return nullptr;
    std::unique_ptr<State> state =
        std::apply([&](auto&... v) { return Prepare(a.context(), v...); }, values);
    if (state == nullptr && a.ok()) a.context().fail("a prepare function returned no state and no error");
    return a.ok() ? state.release() : nullptr;
  }

  static void release_prepared(void* state) { delete static_cast<State*>(state); }

  static void* instantiate(et_ops_kernel_context* ctx, const void* prepared, et_ops_value* const* args,
                           std::size_t n) {
    if constexpr (!std::is_same_v<Instance, void>) {
      ArgumentReader a = reader(ctx, args, n);
      if (!a.ok()) return nullptr;
      Parameters values = read_all<Parameters>(a);
      if (!a.ok()) return nullptr;
      std::unique_ptr<Instance> instance = std::apply(
          [&](auto&... v) { return Instantiate(a.context(), *static_cast<const State*>(prepared), v...); }, values);
      if (instance == nullptr && a.ok()) a.context().fail("an instantiate function returned no instance and no error");
      return a.ok() ? instance.release() : nullptr;
    } else {
      (void)ctx, (void)prepared, (void)args, (void)n;
      return nullptr;
    }
  }

  static void release_instance(void* instance) {
    if constexpr (!std::is_same_v<Instance, void>) delete static_cast<Instance*>(instance);
    else (void)instance;
  }

  static void run(et_ops_kernel_context* ctx, const void* prepared, void* instance, const RunEnvironment* env,
                  et_ops_value* const* args, std::size_t n) {
    ArgumentReader a = reader(ctx, args, n);
    if (!a.ok()) return;
    Parameters values = read_all<Parameters>(a);
    if (!a.ok()) return;
    const State& state = *static_cast<const State*>(prepared);
    std::apply(
        [&](auto&... v) {
          if constexpr (std::is_same_v<Instance, void>) Run(a.context(), state, *env, v...);
          else Run(a.context(), state, *static_cast<Instance*>(instance), *env, v...);
        },
        values);
  }

  // The plain C-ABI kernel of the record: prepare, instantiate, run on one
  // thread and release, in one call.
  static void one_shot(et_ops_kernel_context* ctx, et_ops_value* const* args, std::size_t n) {
    std::unique_ptr<State> state(static_cast<State*>(prepare(ctx, args, n)));
    if (ctx->failed) return;
    const RunEnvironment env{sizeof(RunEnvironment), 1, nullptr};
    if constexpr (std::is_same_v<Instance, void>) {
      run(ctx, state.get(), nullptr, &env, args, n);
    } else {
      std::unique_ptr<Instance> instance(static_cast<Instance*>(instantiate(ctx, state.get(), args, n)));
      if (ctx->failed) return;
      run(ctx, state.get(), instance.get(), &env, args, n);
    }
  }

  static constexpr et_ops_prepared_kernel functions{
      sizeof(et_ops_prepared_kernel), 0, &prepare, &release_prepared,
      std::is_same_v<Instance, void> ? nullptr : &instantiate, &release_instance, &run};
};

template <auto Prepare, auto Instantiate, auto Run>
constexpr KernelDefinition make_prepared_kernel(const char* schema, const char* key) {
  using Prep = PrepareSignature<decltype(Prepare)>;
  using RunSig = RunSignature<decltype(Run)>;
  static_assert(Prep::valid,
                "et_ops::prepared_kernel: prepare must be std::unique_ptr<State> prepare(et_ops::KernelContext&, "
                "...) with one parameter per schema argument");
  static_assert(RunSig::valid,
                "et_ops::prepared_kernel: run must be bool run(et_ops::KernelContext&, const State&, [Instance&,] "
                "const et_ops::RunEnvironment&, ...) with one parameter per schema argument");
  if constexpr (Prep::valid && RunSig::valid) {
    static_assert(Prep::arguments_mapped,
                  "et_ops::prepared_kernel: a parameter of prepare has a type that no schema type maps to (the "
                  "types of et_ops::kernel<&fn> apply)");
    static_assert(std::is_same_v<typename Prep::State, typename RunSig::State>,
                  "et_ops::prepared_kernel: run must take the State that prepare returns");
    static_assert(std::is_same_v<typename Prep::Parameters, typename RunSig::Parameters>,
                  "et_ops::prepared_kernel: prepare and run must take the same argument parameters");
    if constexpr (RunSig::has_instance) {
      using Inst = InstantiateSignature<decltype(Instantiate)>;
      static_assert(Inst::valid,
                    "et_ops::prepared_kernel: instantiate must be std::unique_ptr<Instance> "
                    "instantiate(et_ops::KernelContext&, const State&, ...)");
      if constexpr (Inst::valid) {
        static_assert(std::is_same_v<typename Inst::Instance, typename RunSig::Instance>,
                      "et_ops::prepared_kernel: run must take the Instance that instantiate returns");
        static_assert(std::is_same_v<typename Inst::State, typename Prep::State> &&
                          std::is_same_v<typename Inst::Parameters, typename Prep::Parameters>,
                      "et_ops::prepared_kernel: instantiate must take prepare's State and argument parameters");
      }
    }
    KernelDefinition definition;
    definition.schema = schema;
    definition.key = key;
    definition.fn = &PreparedAbi<Prepare, Instantiate, Run>::one_shot;
    definition.check = Prep::check(schema);
    definition.schema_slot = &kernel_schema<Prepare>;
    definition.prepared = &PreparedAbi<Prepare, Instantiate, Run>::functions;
    if (!definition.check.ok()) kernel_signature_does_not_match_its_schema();
    return definition;
  }
  return KernelDefinition{};
}


}  // namespace detail

// The kernel `Fn` for the operator of `schema`. `key` is "" for the fallback
// kernel, or a kernel key text (et_ops::KernelKey::text()) for a kernel
// specialised to its tensors' dtypes and dim orders.
template <auto Fn>
constexpr KernelDefinition kernel(const char* schema, const char* key = "") {
  using Signature = detail::KernelSignature<decltype(Fn)>;
  static_assert(Signature::valid,
                "et_ops::kernel<&fn>: fn must be a function bool fn(et_ops::KernelContext&, ...) "
                "(a kernel returns ctx.ok())");
  if constexpr (Signature::valid) {
    static_assert(Signature::arguments_mapped,
                  "et_ops::kernel<&fn>: a parameter of fn has a type that no schema type maps to; use "
                  "TensorRef, std::optional<TensorRef>, TensorList, OptionalTensorList, std::string_view, "
                  "int64_t, std::optional<int64_t>, double, std::optional<double>, bool, std::optional<bool>, et_ops::Scalar, std::optional<Scalar>, "
                  "DType, std::optional<DType>, IntList or std::optional<IntList>");
    KernelDefinition definition;
    definition.schema = schema;
    definition.key = key;
    definition.fn = &detail::abi_kernel<Fn>;
    definition.check = detail::check_signature(Fn, schema);
    definition.schema_slot = &detail::kernel_schema<Fn>;
    if (!definition.check.ok()) detail::kernel_signature_does_not_match_its_schema();
    return definition;
  }
  return KernelDefinition{};
}

// A prepared kernel (the writing-kernels page of the documentation, "Prepared
// kernels", tells more):
//
//   std::unique_ptr<State> prepare(KernelContext&, <arguments>);   // at load: constants have data
//   bool run(KernelContext&, const State&, const RunEnvironment&, <arguments>);
//
// `prepare` runs once when a program loads, with the instruction's
// arguments as the program gives them: constant tensors hold their data,
// the others have their dtype, sizes and dim order, and data() null. Its
// State lives with the loaded program and every run gets it read-only.
template <auto Prepare, auto Run>
constexpr KernelDefinition prepared_kernel(const char* schema, const char* key = "") {
  return detail::make_prepared_kernel<Prepare, nullptr, Run>(schema, key);
}

// The same with a mutable part per run state, made when a run state is made
// (the state's arguments, data included, stay the same for all its runs):
//
//   std::unique_ptr<Instance> instantiate(KernelContext&, const State&, <arguments>);
//   bool run(KernelContext&, const State&, Instance&, const RunEnvironment&, <arguments>);
template <auto Prepare, auto Instantiate, auto Run>
constexpr KernelDefinition prepared_kernel(const char* schema, const char* key = "") {
  return detail::make_prepared_kernel<Prepare, Instantiate, Run>(schema, key);
}

// A kernel library: its component name, version and kernels, the records
// and fingerprints of its manifest, and explicit registration. Build one as
// a function-local static (no static initializer runs before main).
class KernelLibrary {
 public:
  // `digest` is the build helper's source digest (see the top of this
  // file); without one, every copy of the library gets fingerprints that
  // match no other copy, so first-wins treats copies as different.
  KernelLibrary(const char* component, const char* version, std::initializer_list<KernelDefinition> kernels,
                const char* digest = ET_OPS_DETAIL_LIBRARY_DIGEST)
      : KernelLibrary(component, version, kernels.begin(), kernels.size(), digest) {}
  KernelLibrary(const char* component, const char* version, const KernelDefinition* kernels, std::size_t count,
                const char* digest = ET_OPS_DETAIL_LIBRARY_DIGEST)
      : component_(component ? component : ""), version_(version ? version : ""), kernels_(kernels, kernels + count) {
    const std::string library_digest = digest != nullptr ? std::string(digest) : unfingerprinted_digest();
    for (const KernelDefinition& k : kernels_)
      if (!k.check.ok() || k.fn == nullptr) note_error(k);
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
  KernelLibrary(const KernelLibrary&) = delete;
  KernelLibrary& operator=(const KernelLibrary&) = delete;

  // Whether every kernel matches its schema; status() says which does not
  // (Invalid, one line per kernel).
  bool ok() const { return error_.empty(); }
  Status status() const { return ok() ? Status() : Status(StatusCode::Invalid, error_); }

  const std::string& component() const { return component_; }
  const std::string& version() const { return version_; }
  // The manifest: the C ABI's view of the library. Empty when !ok().
  const et_ops_manifest& manifest() const { return manifest_; }
  const std::vector<KernelDefinition>& kernels() const { return kernels_; }

  // Registers every kernel into the process registry as one batch, with
  // this library's path as origin. Idempotent.
  [[nodiscard]] RegistrationResult register_kernels() const {
    if (!ok()) return status();
    return registration_result(et_ops_register_manifest(&manifest_));
  }

  // For the loadable-library entry points (ET_OPS_LOADABLE_KERNEL_LIBRARY).
  const et_ops_manifest* loadable_manifest() const { return ok() ? &manifest_ : nullptr; }
  const char* loadable_error() const { return ok() ? nullptr : error_.c_str(); }

 private:
  static std::string unfingerprinted_digest() {
    std::random_device random;
    std::string digest;
    for (int i = 0; i < 4; ++i) digest += std::to_string(random());
    return digest;
  }

  void note_error(const KernelDefinition& k) {
    const std::string_view schema = k.schema ? k.schema : "";
    std::string op(schema_operator_name(schema));
    if (op.empty()) op = "a kernel";
    std::string text = "kernel library " + component_ + ": " + op + ": ";
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
    if (error_.empty()) error_ = text;
    else error_ += "\n" + text;
  }

  static std::string argument_name(std::string_view schema, std::size_t i) { return std::string(argument_at(schema, i).name); }
  static std::string argument_type(std::string_view schema, std::size_t i) { return std::string(argument_at(schema, i).type); }
  static SchemaArgument argument_at(std::string_view schema, std::size_t i) {
    SchemaReader reader(schema);
    SchemaArgument argument;
    for (std::size_t position = 0; reader.next(argument); ++position)
      if (position == i) return argument;
    return SchemaArgument{};
  }

  std::string component_;
  std::string version_;
  std::vector<KernelDefinition> kernels_;
  std::vector<std::string> names_;
  std::vector<std::string> fingerprints_;
  std::vector<et_ops_kernel_record> records_;
  std::vector<et_ops_kernel_record_v2> records_v2_;
  bool has_prepared_ = false;
  et_ops_manifest manifest_{};
  std::string error_;
};

}  // namespace et_ops

// The entry points of a kernel library loaded by path (et-ops run
// --load-library, et_ops.load_library(), et_ops::load_kernel_library):
// `library` names a function returning the library's KernelLibrary. A
// private static copy of a library (ET_OPS_STATIC_KERNELS) exports none.
// Either form is a complete declaration, with or without a ';' after it.
#if defined(ET_OPS_STATIC_KERNELS)
#define ET_OPS_LOADABLE_KERNEL_LIBRARY(library) \
  extern "C" {                                 \
  }
#else
#define ET_OPS_LOADABLE_KERNEL_LIBRARY(library)                                                            \
  extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {                 \
    return (library)().loadable_manifest();                                                                \
  }                                                                                                        \
  extern "C" ET_OPS_VISIBLE const char* et_ops_kernel_library_error(void) { return (library)().loadable_error(); }
#endif

#endif  // ET_OPS_KERNEL_LIBRARY_H
