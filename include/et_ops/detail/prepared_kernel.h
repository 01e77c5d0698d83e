// The kit's prepared kernels (et_ops::prepared_kernel in
// et_ops/kernel_library.h): the signatures of prepare, instantiate and run,
// and the C-ABI functions made from them.
#ifndef ET_OPS_DETAIL_PREPARED_KERNEL_H
#define ET_OPS_DETAIL_PREPARED_KERNEL_H

#include <atomic>
#include <cstddef>
#include <memory>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "et_ops/abi.h"
#include "et_ops/detail/argument_reader.h"
#include "et_ops/detail/kernel_signature.h"
#include "et_ops/kernel_context.h"

namespace et_ops {

// What a run passes to a prepared kernel: thread_count, and the run
// state's thread pool (a pthreadpool_t, NULL for one thread).
using RunEnvironment = et_ops_run_environment;

namespace detail {

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
}  // namespace et_ops

#endif  // ET_OPS_DETAIL_PREPARED_KERNEL_H
