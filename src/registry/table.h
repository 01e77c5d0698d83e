// The registry's immutable snapshot: every operator with its records, and an
// open-addressing index over precomputed name hashes. A table is built in
// one allocation and never changes once published, so readers use it
// without a lock.
#ifndef ET_OPS_SRC_REGISTRY_TABLE_H
#define ET_OPS_SRC_REGISTRY_TABLE_H

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "registry/batch.h"

namespace et_ops::detail {

// One operator. Its records sit together in Table::records(), sorted by key
// text, then registration order: the first record of each key is the active
// one, the others identical copies kept behind it (first-wins) that take
// over if its library is unregistered.
struct Entry {
  std::string_view name;
  uint64_t hash = 0;
  ResolvedKernel fallback;  // the active fallback kernel, cached for lookups
  bool has_specialised = false;
  uint32_t first = 0;  // into records()
  uint32_t count = 0;
};

class Table {
 public:
  // Sizes a table; fill it with the add_* calls, then finish().
  static Table* create(std::size_t entries, std::size_t records, std::size_t batches);
  static void destroy(const Table* table);

  void add_batch(Batch* batch) { batches_[batch_count_++] = batch; }
  // Starts the next entry; its records follow with add_record.
  void add_entry(std::string_view name, uint64_t hash);
  void add_record(const Record* record) { records_[record_count_++] = record; }
  // Sorts each entry's records, caches the fallbacks and builds the index.
  void finish();

  const Entry* find(std::string_view name, uint64_t hash) const {
    const uint32_t tag = static_cast<uint32_t>(hash >> 32);
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const Slot slot = index_[at];
      if (slot.entry == 0) return nullptr;
      if (slot.tag == tag) {
        const Entry& e = entries_[slot.entry - 1];
        if (e.name == name) return &e;
      }
    }
  }
  // The active specialised record that matches the tensors, or nullptr.
  const Record* specialised_match(const Entry& entry, const et_ops_tensor* const* tensors, std::size_t count) const;

  const Entry* entries_begin() const { return entries_; }
  const Entry* entries_end() const { return entries_ + entry_count_; }
  const Record* const* records_of(const Entry& e) const { return records_ + e.first; }
  Batch* const* batches_begin() const { return batches_; }
  Batch* const* batches_end() const { return batches_ + batch_count_; }
  std::size_t record_count() const { return record_count_; }

 private:
  struct Slot {
    uint32_t tag;    // the hash's high half
    uint32_t entry;  // index + 1; 0: empty
  };
  Table() = default;

  Entry* entries_ = nullptr;
  const Record** records_ = nullptr;
  Batch** batches_ = nullptr;
  Slot* index_ = nullptr;
  std::size_t entry_count_ = 0, record_count_ = 0, batch_count_ = 0;
  std::size_t mask_ = 0;
};

// Whether record i of an entry's records is the active copy of its key.
inline bool is_active(const Record* const* records, std::size_t i) {
  return i == 0 || records[i]->key_text != records[i - 1]->key_text;
}

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_TABLE_H
