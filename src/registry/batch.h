// What the registry keeps of one registered manifest: its origin and its
// records, text included, in one allocation. A batch never changes once
// built; registry tables point into it and it lives as long as one does.
#ifndef ET_OPS_SRC_REGISTRY_BATCH_H
#define ET_OPS_SRC_REGISTRY_BATCH_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "et_ops/registry.h"

namespace et_ops::detail {

struct Batch;

struct Record {
  std::string_view op;
  std::string_view key_text;  // canonical text; empty for the fallback
  std::string_view schema;
  std::string_view fingerprint;
  uint64_t hash = 0;  // of op
  et_ops_kernel_fn fn = nullptr;
  const KernelKey* key = nullptr;  // nullptr: the fallback kernel
  const et_ops_prepared_kernel* prepared = nullptr;  // a prepared kernel's functions; nullptr: plain
  int32_t argument_count = -1;     // from the schema; -1 when it does not parse
  uint64_t written = 0;            // bit i: the kernel writes argument i
  const Batch* batch = nullptr;
  uint64_t sequence = 0;  // registration order, for stable introspection

  bool is_fallback() const { return key == nullptr; }
  ResolvedKernel resolved() const { return ResolvedKernel{fn, argument_count, written, prepared}; }
};

struct Batch {
  std::string_view component;
  std::string_view version;
  std::string_view library_path;
  Record* records = nullptr;
  std::size_t record_count = 0;
  KernelKey* keys = nullptr;  // the specialised records' keys
  std::size_t key_count = 0;
  uint32_t table_references = 0;  // registry tables that hold it (changed by writers only)

  Origin origin() const { return Origin{std::string(component), std::string(version), std::string(library_path)}; }
};

// The records of `m` (already validated), numbered from `first_sequence`,
// in one allocation; `lengths` is scratch space. Throws std::bad_alloc.
Batch* make_batch(const et_ops_manifest& m, std::string_view library_path, uint64_t first_sequence,
                  std::vector<std::size_t>& lengths);
void destroy_batch(Batch* batch);

// Record i of a manifest, whose records may be larger than ours (a newer
// builder); a version 1 record is a plain kernel.
inline et_ops_kernel_record_v2 manifest_record(const et_ops_manifest& m, std::size_t i) {
  const char* at = reinterpret_cast<const char*>(m.records) + i * m.record_size;
  et_ops_kernel_record_v2 r{};
  std::memcpy(&r, at, m.abi_version >= ET_OPS_ABI_VERSION_PREPARED ? sizeof r : sizeof r.base);
  return r;
}

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_BATCH_H
