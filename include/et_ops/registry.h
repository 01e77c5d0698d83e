// The process-wide operator registry (its state lives in libet_ops.so).
//
// Kernel libraries register batches of records through the C ABI
// (et_ops_register_manifest); this header is the C++ face of the same
// registry: policies, lookup, unregistering and introspection.
#ifndef ET_OPS_REGISTRY_H
#define ET_OPS_REGISTRY_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/status.h"

namespace et_ops {

// What happens when two different copies of a kernel (same operator and
// key, different function addresses) are registered.
enum class DuplicatePolicy { Fatal, FirstWins };

inline constexpr const char* kDuplicatePolicyVariable = "ET_OPS_DUPLICATE_POLICY";

inline constexpr std::string_view duplicate_policy_name(DuplicatePolicy p) {
  return p == DuplicatePolicy::Fatal ? "fatal" : "first-wins";
}
// "fatal" or "first-wins"; Invalid for any other text.
inline Result<DuplicatePolicy> parse_duplicate_policy(std::string_view name) {
  if (name == "fatal") return DuplicatePolicy::Fatal;
  if (name == "first-wins") return DuplicatePolicy::FirstWins;
  return Status(StatusCode::Invalid,
                "unknown policy '" + std::string(name) + "' (valid: fatal, first-wins)");
}

// The strongest choice wins: this call, then ET_OPS_DUPLICATE_POLICY, then
// the build's default (Meson option duplicate_policy).
ET_OPS_API void set_duplicate_policy(DuplicatePolicy policy);
// Forgets the explicit choice, so the environment and the default apply again.
ET_OPS_API void clear_duplicate_policy();

struct PolicyChoice {
  DuplicatePolicy policy = DuplicatePolicy::Fatal;
  std::string source;  // "set_duplicate_policy()", "ET_OPS_DUPLICATE_POLICY", "build default"
};
// The policy that the next registration will use, and where it comes from;
// Policy when ET_OPS_DUPLICATE_POLICY holds something else than a policy.
ET_OPS_API Result<PolicyChoice> effective_duplicate_policy();

// The layout a specialised kernel is written for: one entry per tensor
// argument, in argument order.
struct TensorMeta {
  DType dtype = DType::Float32;
  std::vector<uint8_t> dim_order;  // empty: contiguous of any rank
  bool operator==(const TensorMeta& o) const { return dtype == o.dtype && dim_order == o.dim_order; }
};

// A kernel key: the fallback (no metas) or a specialisation. Its text form,
// used in et_ops_kernel_record::key, is "" for the fallback, else
// "v1/<dtype>;<d0>,<d1>...|<dtype>;..." with dtype numbers as in
// et_ops_dtype and the dim order after the ';' ("v1/6;0,1|6;0,1").
class ET_OPS_API KernelKey {
 public:
  KernelKey() = default;
  explicit KernelKey(std::vector<TensorMeta> metas) : metas_(std::move(metas)) {}
  // Invalid when `text` is not a key's text form.
  static Result<KernelKey> parse(std::string_view text);
  std::string text() const;
  bool is_fallback() const { return metas_.empty(); }
  const std::vector<TensorMeta>& metas() const { return metas_; }
  // Whether tensors with these metas can use this kernel.
  bool matches(const et_ops_tensor* const* tensors, std::size_t count) const;
  bool operator==(const KernelKey& o) const { return metas_ == o.metas_; }

 private:
  std::vector<TensorMeta> metas_;
};

struct Origin {
  std::string component;     // "kernels_quantized"
  std::string version;       // the library's version string
  std::string library_path;  // canonical path of the shared object (dladdr)
};

struct RecordInfo {
  std::string op;
  std::string key;  // text form; "" is the fallback
  std::string schema;
  std::string fingerprint;
  Origin origin;
  const void* function = nullptr;
  bool active = true;  // false: an identical copy kept behind the active one (first-wins)
};

struct Counters {
  uint64_t registered = 0;    // records accepted, over the life of the process
  uint64_t deduplicated = 0;  // identical copies accepted behind an active record
  uint64_t conflicts = 0;     // conflicting records in rejected batches
  uint64_t unregistered = 0;  // records removed by unregister_library
};

// What an accepted registration did, record by record.
struct Registration {
  uint32_t registered = 0;    // records added by the batch
  uint32_t deduplicated = 0;  // identical copies kept behind the active ones (first-wins)
  uint32_t unchanged = 0;     // records already registered with the same function
};

// A registration's counts, or why the batch was rejected: Conflict
// (first-wins met a different copy), Invalid (a malformed manifest),
// Policy (ET_OPS_DUPLICATE_POLICY is not a policy) or NoMemory.
using RegistrationResult = Result<Registration>;

// The C ABI's result as a RegistrationResult (frees its message).
inline RegistrationResult registration_result(et_ops_registration_result raw) {
  std::string message = raw.message != nullptr ? raw.message : "";
  et_ops_string_free(raw.message);
  if (raw.status != ET_OPS_OK) return Status(static_cast<StatusCode>(raw.status), std::move(message));
  return Registration{raw.registered, raw.deduplicated, raw.unchanged};
}

// Registers a manifest atomically: every record of it, or none (a rejected
// batch leaves the registry exactly as it was).
[[nodiscard]] ET_OPS_API RegistrationResult register_manifest(const et_ops_manifest& manifest);

// Removes every record that came from the shared object at `library_path`
// (any path that resolves to it). Returns how many records were removed.
ET_OPS_API std::size_t unregister_library(std::string_view library_path);

// What the runtime needs of a kernel: the function, and which arguments
// it writes, read once from its schema when it was registered. A schema
// that does not parse (or lists more than 64 arguments) tells nothing:
// argument_count is -1 and writes() is false.
struct ResolvedKernel {
  et_ops_kernel_fn fn = nullptr;
  int32_t argument_count = -1;
  uint64_t written = 0;  // bit i: the kernel writes argument i
  const et_ops_prepared_kernel* prepared = nullptr;  // a prepared kernel's functions (fn stays callable alone)
  explicit operator bool() const { return fn != nullptr; }
  bool writes(std::size_t argument) const { return argument < 64 && ((written >> argument) & 1u) != 0; }
};

// The hot path: no lock. Returns the kernel specialised for `tensors` if
// one matches, else the fallback, else nullptr.
ET_OPS_API et_ops_kernel_fn lookup(std::string_view op, const et_ops_tensor* const* tensors = nullptr,
                                   std::size_t tensor_count = 0);
// The same choice as lookup(), with what the schema says about the arguments.
ET_OPS_API ResolvedKernel lookup_kernel(std::string_view op, const et_ops_tensor* const* tensors = nullptr,
                                        std::size_t tensor_count = 0);
ET_OPS_API bool has_operator(std::string_view op);

// Every record, sorted by operator, key and registration order.
ET_OPS_API std::vector<RecordInfo> registered_records();
ET_OPS_API Counters counters();
// A deterministic text dump of every record (one line each).
ET_OPS_API std::string dump_records();

// Canonical form of a shared-object path (realpath when it exists).
ET_OPS_API std::string canonical_library_path(std::string_view path);

}  // namespace et_ops

#endif  // ET_OPS_REGISTRY_H
