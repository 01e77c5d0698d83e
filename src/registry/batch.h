// What the registry keeps of one registered manifest: its origin and its
// records, text included, in one allocation. A batch never changes once
// built; registry tables point into it and it lives as long as one does.
//
// Registering pays for every byte it keeps (a fresh page costs more than
// reading a record), so a record is 32 bytes of offsets into its block, and
// the text is stored once: a schema that starts with its operator's name
// keeps only the rest (the tail), and consecutive records whose tails are
// equal (the .out overloads of one family) share one copy and one summary.
#ifndef ET_OPS_SRC_REGISTRY_BATCH_H
#define ET_OPS_SRC_REGISTRY_BATCH_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "et_ops/registry.h"

namespace et_ops::detail {

struct Batch;

// The part of a schema after the operator's name, with what it says about
// the arguments (read once, when the first record with it is registered).
struct alignas(8) SchemaTail {
  std::string_view text;
  int32_t argument_count = -1;  // -1: the schema does not parse, or has more than 64 arguments
  uint64_t written = 0;         // bit i: the kernel writes argument i
};

// A specialised record's key, parsed, and its canonical text.
struct BatchKey {
  KernelKey key;
  std::string_view text;
};

class Record {
 public:
  std::string_view op() const { return {at(op_at_), op_size_}; }
  std::string_view fingerprint() const { return {at(op_at_ + op_size_), fingerprint_size_}; }
  // The schema as registered, and whether two records' schemas are equal.
  std::string schema() const;
  bool same_schema(const Record& other) const;
  bool is_fallback() const { return key_at_ == 0; }
  const KernelKey* key() const { return is_fallback() ? nullptr : &batch_key().key; }
  std::string_view key_text() const { return is_fallback() ? std::string_view() : batch_key().text; }
  const Batch& batch() const;
  uint64_t sequence() const;  // registration order, for stable introspection
  // A prepared kernel's functions; nullptr for a plain kernel.
  const et_ops_prepared_kernel* prepared() const;
  ResolvedKernel resolved() const {
    return ResolvedKernel{fn, tail().argument_count, tail().written, prepared()};
  }

  et_ops_kernel_fn fn = nullptr;

 private:
  friend class BatchBuilder;
  // The fingerprint's text follows the operator's.
  Record(et_ops_kernel_fn f, uint32_t index, uint32_t op_at, uint32_t op_size, uint32_t fingerprint_size,
         uint32_t tail_at, bool named_schema, bool prepared, uint32_t key_at)
      : fn(f), index_(index), op_at_(op_at), op_size_(op_size), fingerprint_size_(fingerprint_size),
        tail_at_(tail_at | (named_schema ? kNamedSchema : 0) | (prepared ? kPrepared : 0)), key_at_(key_at) {}
  const char* at(uint32_t offset) const { return reinterpret_cast<const char*>(this) + offset; }
  const SchemaTail& tail() const {
    return *reinterpret_cast<const SchemaTail*>(at(tail_at_ & ~(kNamedSchema | kPrepared)));
  }
  bool named_schema() const { return (tail_at_ & kNamedSchema) != 0; }
  const BatchKey& batch_key() const { return *reinterpret_cast<const BatchKey*>(at(key_at_)); }

  // Offsets are in bytes from this record: everything it refers to follows
  // the record array in the block.
  static constexpr uint32_t kNamedSchema = 1;  // in tail_at_: the schema is op() followed by the tail
  static constexpr uint32_t kPrepared = 2;     // in tail_at_: a pointer to the prepared kernel's functions
                                               // follows the fingerprint's text, 8-aligned
  uint32_t index_ = 0;                         // in its batch
  uint32_t op_at_ = 0, op_size_ = 0, fingerprint_size_ = 0;
  uint32_t tail_at_ = 0;  // SchemaTails are 8-aligned, so bits 0 and 1 hold the flags
  uint32_t key_at_ = 0;   // 0: the fallback kernel
};
static_assert(sizeof(Record) == 32, "a record is 32 bytes: each one costs page faults when registered cold");

struct Batch {
  std::string_view component;
  std::string_view version;
  std::string_view library_path;
  std::size_t record_count = 0;
  BatchKey* keys = nullptr;   // the specialised records' keys
  std::size_t key_count = 0;  // constructed so far
  uint64_t first_sequence = 0;
  uint32_t table_references = 0;  // registry tables that hold it (changed by writers only)

  // The records follow the header in the same block.
  Record* records();
  const Record* records() const;
  Origin origin() const { return Origin{std::string(component), std::string(version), std::string(library_path)}; }
};

inline constexpr std::size_t kBatchRecordsOffset =
    (sizeof(Batch) + alignof(Record) - 1) / alignof(Record) * alignof(Record);

inline Record* Batch::records() { return reinterpret_cast<Record*>(reinterpret_cast<char*>(this) + kBatchRecordsOffset); }
inline const Record* Batch::records() const {
  return reinterpret_cast<const Record*>(reinterpret_cast<const char*>(this) + kBatchRecordsOffset);
}

inline const Batch& Record::batch() const {
  return *reinterpret_cast<const Batch*>(reinterpret_cast<const char*>(this - index_) - kBatchRecordsOffset);
}
inline uint64_t Record::sequence() const { return batch().first_sequence + index_; }
inline const et_ops_prepared_kernel* Record::prepared() const {
  if ((tail_at_ & kPrepared) == 0) return nullptr;
  const uint32_t slot = (op_at_ + op_size_ + fingerprint_size_ + 7) / 8 * 8;
  return *reinterpret_cast<const et_ops_prepared_kernel* const*>(at(slot));
}

// Per record, what the sizing pass of make_batch found, for the fill pass
// and the registry's index.
struct MeasuredRecord {
  uint32_t op_size = 0, fingerprint_size = 0;
  uint32_t hash = 0;          // hash_name(op)
  bool named_schema = false;  // the schema starts with the operator's name
  bool new_tail = false;      // its tail differs from the previous record's
};

// The records of `m` (already validated), numbered from `first_sequence`,
// in one allocation; `measured` is scratch space. Throws std::bad_alloc.
Batch* make_batch(const et_ops_manifest& m, std::string_view library_path, uint64_t first_sequence,
                  std::vector<MeasuredRecord>& measured);
void destroy_batch(Batch* batch);

// Record i of a manifest, whose records may be larger than ours (a newer builder).
inline const et_ops_kernel_record& manifest_record(const et_ops_manifest& m, std::size_t i) {
  return *et_ops_manifest_record(&m, i);
}

// The same record as a version 2 record, or nullptr in a version 1
// manifest (whose records are all plain kernels).
inline const et_ops_kernel_record_v2* manifest_record_v2(const et_ops_manifest& m, std::size_t i) {
  if (m.abi_version < ET_OPS_ABI_VERSION_PREPARED) return nullptr;
  return reinterpret_cast<const et_ops_kernel_record_v2*>(&manifest_record(m, i));
}

// Record i's prepared kernel, or nullptr for a plain kernel.
inline const et_ops_prepared_kernel* manifest_prepared(const et_ops_manifest& m, std::size_t i) {
  const et_ops_kernel_record_v2* r = manifest_record_v2(m, i);
  return r != nullptr && r->kind == ET_OPS_KERNEL_PREPARED ? r->prepared : nullptr;
}

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_BATCH_H
