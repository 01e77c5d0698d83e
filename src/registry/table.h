// The registry's immutable snapshot: every operator with its records, and an
// open-addressing index over precomputed name hashes. A table is built in
// one allocation and never changes once published, so readers use it
// without a lock.
#ifndef ET_OPS_SRC_REGISTRY_TABLE_H
#define ET_OPS_SRC_REGISTRY_TABLE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "registry/batch.h"

namespace et_ops::detail {

// One operator, in 32 bytes (a lookup reads one index slot and one entry).
// Its records sit together in the table, sorted by key text, then
// registration order: the first record of each key is the active one, the
// others identical copies kept behind it (first-wins) that take over if its
// library is unregistered.
struct Entry {
  const char* name_data = nullptr;
  uint32_t name_size = 0;
  uint32_t hash = 0;  // hash_name(name())
  uint32_t first = 0;  // into the table's records
  uint32_t count_and_flag = 0;  // the record count; the top bit: some record is specialised
  et_ops_kernel_fn fallback = nullptr;  // the active fallback kernel, cached for lookups

  static constexpr uint32_t kSpecialised = 0x80000000u;
  std::string_view name() const { return {name_data, name_size}; }
  uint32_t count() const { return count_and_flag & ~kSpecialised; }
  bool has_specialised() const { return (count_and_flag & kSpecialised) != 0; }
};

class Table {
 public:
  // Sizes a table for at most this much. Fill it with the add_* calls:
  // entries first, then each entry's records between begin_records and
  // end_records, in entry order.
  static Table* create(std::size_t entries, std::size_t records, std::size_t batches);
  static void destroy(const Table* table);

  void add_batch(Batch* batch) { batches_[batch_count_++] = batch; }
  // Appends and indexes an entry whose name is not in the table yet;
  // returns its number.
  uint32_t add_entry(std::string_view name, uint32_t hash) {
    std::size_t at = hash & mask_;
    while (index_[at].entry != 0) at = (at + 1) & mask_;
    return insert(at, name, hash);
  }
  // The number of the entry named `name`, appended and indexed if new.
  uint32_t find_or_add_entry(std::string_view name, uint32_t hash) {
    const std::size_t at = probe(name, hash);
    return index_[at].entry != 0 ? index_[at].entry - 1 : insert(at, name, hash);
  }
  void prefetch_slot(uint32_t hash) const { __builtin_prefetch(&index_[hash & mask_]); }
  void begin_records(uint32_t number) { entries_[number].first = static_cast<uint32_t>(record_count_); }
  void add_record(const Record* record) { records_[record_count_++] = record; }
  // Forgets every record added, to lay them out again.
  void clear_records() { record_count_ = 0; }
  // Counts and sorts the entry's records and caches its fallback.
  void end_records(uint32_t number) {
    Entry& e = entries_[number];
    if (record_count_ - e.first == 1) return finish(e, records_ + e.first, 1);  // most entries
    end_records_sorted(e);
  }

  const Entry* find(std::string_view name, uint32_t hash) const {
    const Slot slot = index_[probe(name, hash)];
    return slot.entry == 0 ? nullptr : &entries_[slot.entry - 1];
  }
  // The active specialised record that matches the tensors, or nullptr.
  const Record* specialised_match(const Entry& entry, const et_ops_tensor* const* tensors, std::size_t count) const;
  // The active fallback record, or nullptr.
  const Record* fallback_record(const Entry& entry) const {
    return entry.fallback != nullptr ? records_of(entry)[0] : nullptr;
  }

  const Entry* entries_begin() const { return entries_; }
  const Entry* entries_end() const { return entries_ + entry_count_; }
  std::size_t entry_count() const { return entry_count_; }
  const Record* const* records_of(const Entry& e) const { return records_ + e.first; }
  Batch* const* batches_begin() const { return batches_; }
  Batch* const* batches_end() const { return batches_ + batch_count_; }
  std::size_t batch_count() const { return batch_count_; }
  std::size_t record_count() const { return record_count_; }

 private:
  struct Slot {
    uint32_t hash;
    uint32_t entry;  // number + 1; 0: empty
  };
  Table() = default;

  // The slot that holds `name`, or the empty slot where it would go.
  std::size_t probe(std::string_view name, uint32_t hash) const {
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const Slot slot = index_[at];
      if (slot.entry == 0) return at;
      if (slot.hash == hash) {
        const Entry& e = entries_[slot.entry - 1];
        if (e.name_size == name.size() && std::memcmp(e.name_data, name.data(), name.size()) == 0) return at;
      }
    }
  }
  uint32_t insert(std::size_t at, std::string_view name, uint32_t hash);
  void end_records_sorted(Entry& e);
  // The name lives as long as the entry's first record (whose library may
  // not be the one that named the entry).
  static void finish(Entry& e, const Record* const* records, uint32_t count) {
    const Record& first = *records[0];
    e.name_data = first.op().data();
    e.fallback = first.is_fallback() ? first.fn : nullptr;
    e.count_and_flag = count | (records[count - 1]->is_fallback() ? 0 : Entry::kSpecialised);
  }

  Entry* entries_ = nullptr;
  const Record** records_ = nullptr;
  Batch** batches_ = nullptr;
  Slot* index_ = nullptr;
  std::size_t entry_count_ = 0, record_count_ = 0, batch_count_ = 0;
  std::size_t mask_ = 0;
};

// Whether record i of an entry's records is the active copy of its key.
inline bool is_active(const Record* const* records, std::size_t i) {
  return i == 0 || records[i]->key_text() != records[i - 1]->key_text();
}

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_TABLE_H
