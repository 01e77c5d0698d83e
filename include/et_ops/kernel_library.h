// The kit for writing a kernel library: templates here and in
// et_ops/detail/, the rest compiled once in libet_ops.
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

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/detail/argument_reader.h"
#include "et_ops/detail/kernel_signature.h"
#include "et_ops/detail/prepared_kernel.h"
#include "et_ops/export.h"
#include "et_ops/kernel_context.h"
#include "et_ops/registry.h"
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
class ET_OPS_API KernelLibrary {
 public:
  // `digest` is the build helper's source digest (see the top of this
  // file); without one, every copy of the library gets fingerprints that
  // match no other copy, so first-wins treats copies as different.
  KernelLibrary(const char* component, const char* version, std::initializer_list<KernelDefinition> kernels,
                const char* digest = ET_OPS_DETAIL_LIBRARY_DIGEST)
      : KernelLibrary(component, version, kernels.begin(), kernels.size(), digest) {}
  KernelLibrary(const char* component, const char* version, const KernelDefinition* kernels, std::size_t count,
                const char* digest = ET_OPS_DETAIL_LIBRARY_DIGEST);
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
  [[nodiscard]] RegistrationResult register_kernels() const;

  // For the loadable-library entry points (ET_OPS_LOADABLE_KERNEL_LIBRARY).
  const et_ops_manifest* loadable_manifest() const { return ok() ? &manifest_ : nullptr; }
  const char* loadable_error() const { return ok() ? nullptr : error_.c_str(); }

 private:
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
