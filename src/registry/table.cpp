// Building a table in one allocation.
#include "registry/table.h"

#include <algorithm>
#include <new>

#include "registry/fault_injection.h"

namespace et_ops::detail {
namespace {

constexpr std::size_t align_up(std::size_t n, std::size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

std::size_t index_capacity(std::size_t entries) {
  std::size_t capacity = 8;
  while (capacity < entries * 2) capacity *= 2;  // at most half full: short probes
  return capacity;
}

}  // namespace

Table* Table::create(std::size_t entries, std::size_t records, std::size_t batches) {
  const std::size_t capacity = index_capacity(entries);
  const std::size_t entries_at = align_up(sizeof(Table), alignof(Entry));
  const std::size_t records_at = align_up(entries_at + entries * sizeof(Entry), alignof(const Record*));
  const std::size_t batches_at = records_at + records * sizeof(const Record*);
  const std::size_t index_at = align_up(batches_at + batches * sizeof(Batch*), alignof(Slot));
  const std::size_t total = index_at + capacity * sizeof(Slot);
  maybe_inject_allocation_failure();
  char* block = static_cast<char*>(::operator new(total));
  auto* table = new (block) Table();
  table->entries_ = reinterpret_cast<Entry*>(block + entries_at);
  table->records_ = reinterpret_cast<const Record**>(block + records_at);
  table->batches_ = reinterpret_cast<Batch**>(block + batches_at);
  table->index_ = reinterpret_cast<Slot*>(block + index_at);
  table->mask_ = capacity - 1;
  std::fill(table->index_, table->index_ + capacity, Slot{0, 0});
  return table;
}

void Table::destroy(const Table* table) {
  if (table == nullptr) return;
  table->~Table();
  ::operator delete(const_cast<void*>(static_cast<const void*>(table)));
}

uint32_t Table::insert(std::size_t at, std::string_view name, uint32_t hash) {
  const auto number = static_cast<uint32_t>(entry_count_++);
  new (&entries_[number]) Entry{name.data(), static_cast<uint32_t>(name.size()), hash, 0, 0, nullptr};
  index_[at] = Slot{hash, number + 1};
  return number;
}

void Table::end_records_sorted(Entry& e) {
  const auto count = static_cast<uint32_t>(record_count_ - e.first);
  const Record** records = records_ + e.first;
  // Stable by key text: registration order stays within a key. Entries
  // hold a handful of records, so insertion sort.
  for (std::size_t a = 1; a < count; ++a)
    for (std::size_t b = a; b > 0 && records[b]->key_text() < records[b - 1]->key_text(); --b)
      std::swap(records[b], records[b - 1]);
  finish(e, records, count);
}

const Record* Table::specialised_match(const Entry& entry, const et_ops_tensor* const* tensors,
                                       std::size_t count) const {
  const Record* const* records = records_of(entry);
  for (std::size_t i = 0; i < entry.count(); ++i)
    if (!records[i]->is_fallback() && is_active(records, i) && records[i]->key()->matches(tensors, count))
      return records[i];
  return nullptr;
}

}  // namespace et_ops::detail
