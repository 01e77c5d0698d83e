// The process-wide registry. Writers serialise on a mutex, build the next
// immutable Table (one allocation for the new batch, one for the table)
// and publish it through an atomic pointer; readers load that pointer under
// a hazard guard and never lock. A replaced table is freed once no reader
// holds it (hazard.h), and a batch once no table holds it.
#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "registry/batch.h"
#include "registry/hazard.h"
#include "registry/messages.h"
#include "registry/name_hash.h"
#include "registry/table.h"

namespace et_ops {
namespace detail {
namespace {

std::string validate(const et_ops_manifest& m) {
  if (m.abi_version != ET_OPS_ABI_VERSION && m.abi_version != ET_OPS_ABI_VERSION_PREPARED)
    return fmt::format("unsupported ABI version {} (this registry speaks versions {} and {})", m.abi_version,
                       ET_OPS_ABI_VERSION, ET_OPS_ABI_VERSION_PREPARED);
  const std::size_t record_size =
      m.abi_version == ET_OPS_ABI_VERSION ? sizeof(et_ops_kernel_record) : sizeof(et_ops_kernel_record_v2);
  if (m.record_size < record_size)
    return fmt::format("record size {} is smaller than version {} records ({} bytes)", m.record_size,
                       m.abi_version, record_size);
  if (m.component == nullptr || *m.component == '\0') return "the manifest names no component";
  if (m.record_count > 0 && m.records == nullptr) return "the manifest has records but no record array";
  return {};
}

bool is_valid_key(const char* key) { return key != nullptr && (*key == '\0' || KernelKey::parse(key)); }

std::string validate_record(const et_ops_kernel_record_v2& record, std::size_t i) {
  const et_ops_kernel_record& r = record.base;
  if (r.op == nullptr || *r.op == '\0') return fmt::format("record {} has no operator name", i);
  if (r.fn == nullptr) return fmt::format("record {} ({}) has no function", i, r.op);
  if (!is_valid_key(r.key))
    return fmt::format("record {} ({}) has an invalid kernel key '{}'", i, r.op, r.key ? r.key : "(null)");
  if (r.schema == nullptr || r.fingerprint == nullptr)
    return fmt::format("record {} ({}) lacks a schema or fingerprint", i, r.op);
  if (record.kind != ET_OPS_KERNEL_PLAIN && record.kind != ET_OPS_KERNEL_PREPARED)
    return fmt::format("record {} ({}) has an unknown kernel kind {}", i, r.op, record.kind);
  if (record.kind == ET_OPS_KERNEL_PREPARED) {
    const et_ops_prepared_kernel* p = record.prepared;
    if (p == nullptr || p->struct_size < sizeof(et_ops_prepared_kernel) || p->prepare == nullptr ||
        p->release_prepared == nullptr || p->run == nullptr || (p->instantiate != nullptr && p->release_instance == nullptr))
      return fmt::format("record {} ({}) is a prepared kernel without its prepare, release and run functions", i,
                         r.op);
  }
  return {};
}

// The shared object that holds `address`, by dladdr, canonicalised.
std::string library_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr && *info.dli_fname != '\0')
    return canonical_library_path(info.dli_fname);
  return canonical_library_path("/proc/self/exe");
}

struct BatchDeleter {
  void operator()(Batch* b) const { destroy_batch(b); }
};
using BatchOwner = std::unique_ptr<Batch, BatchDeleter>;

struct TableDeleter {
  void operator()(const Table* t) const { Table::destroy(t); }
};
using TableOwner = std::unique_ptr<Table, TableDeleter>;

}  // namespace

class Registry {
 public:
  Registry() {
    Table* empty = Table::create(0, 0, 0);
    empty->finish();
    table_.store(empty);
  }

  RegistrationResult register_manifest(const et_ops_manifest& m) {
    if (std::string error = validate(m); !error.empty()) return invalid(m, error);
    for (std::size_t i = 0; i < m.record_count; ++i)
      if (std::string error = validate_record(manifest_record(m, i), i); !error.empty()) return invalid(m, error);
    if (m.record_count == 0) return RegistrationResult(ET_OPS_OK, {}, 0, 0, 0);
    PolicyChoice policy = effective_duplicate_policy();
    if (!policy.ok()) return RegistrationResult(ET_OPS_ERROR_POLICY, policy.error, 0, 0, 0);
    const std::string library = library_of(reinterpret_cast<const void*>(manifest_record(m, 0).base.fn));
    try {
      return register_locked(m, library, policy);
    } catch (const std::bad_alloc&) {
      return RegistrationResult(ET_OPS_ERROR_NO_MEMORY,
                                fmt::format("out of memory while registering component {}; the registry is unchanged",
                                            m.component),
                                0, 0, 0);
    }
  }

  std::size_t unregister(const std::string& library_path) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    const Table& old = *current();
    auto removed_here = [&](const Record* r) { return r->batch->library_path == library_path; };
    std::size_t entries = 0, records = 0, removed = 0, batches = 0;
    for (const Entry* e = old.entries_begin(); e != old.entries_end(); ++e) {
      const std::size_t kept =
          std::count_if(old.records_of(*e), old.records_of(*e) + e->count, [&](const Record* r) { return !removed_here(r); });
      records += kept;
      removed += e->count - kept;
      entries += kept > 0;
    }
    if (removed == 0) return 0;
    for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b) batches += (*b)->library_path != library_path;
    TableOwner next(Table::create(entries, records, batches));
    for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b)
      if ((*b)->library_path != library_path) next->add_batch(*b);
    for (const Entry* e = old.entries_begin(); e != old.entries_end(); ++e) {
      const Record* const* rs = old.records_of(*e);
      if (std::all_of(rs, rs + e->count, removed_here)) continue;
      next->add_entry(e->name, e->hash);
      for (std::size_t i = 0; i < e->count; ++i)
        if (!removed_here(rs[i])) next->add_record(rs[i]);
    }
    next->finish();
    publish(std::move(next));
    unregistered_ += removed;
    return removed;
  }

  ResolvedKernel lookup(std::string_view op, const et_ops_tensor* const* tensors, std::size_t count) const {
    const uint64_t hash = hash_name(op);
    HazardGuard<Table> table(table_);
    const Entry* entry = table->find(op, hash);
    if (entry == nullptr) return {};
    if (entry->has_specialised && count > 0)
      if (const Record* r = table->specialised_match(*entry, tensors, count)) return r->resolved();
    return entry->fallback;
  }

  bool has(std::string_view op) const {
    const uint64_t hash = hash_name(op);
    HazardGuard<Table> table(table_);
    return table->find(op, hash) != nullptr;
  }

  std::vector<RecordInfo> records() const {
    std::vector<RecordInfo> out;
    std::vector<uint64_t> sequences;
    {
      HazardGuard<Table> table(table_);
      out.reserve(table->record_count());
      for (const Entry* e = table->entries_begin(); e != table->entries_end(); ++e) {
        const Record* const* rs = table->records_of(*e);
        for (std::size_t i = 0; i < e->count; ++i) {
          const Record& r = *rs[i];
          out.push_back(RecordInfo{std::string(r.op), std::string(r.key_text), std::string(r.schema),
                                   std::string(r.fingerprint), r.batch->origin(), reinterpret_cast<const void*>(r.fn),
                                   is_active(rs, i)});
          sequences.push_back(r.sequence);
        }
      }
    }
    std::vector<std::size_t> order(out.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (out[a].op != out[b].op) return out[a].op < out[b].op;
      if (out[a].key != out[b].key) return out[a].key < out[b].key;
      return sequences[a] < sequences[b];
    });
    std::vector<RecordInfo> sorted;
    sorted.reserve(out.size());
    for (std::size_t i : order) sorted.push_back(std::move(out[i]));
    return sorted;
  }

  Counters counters() const {
    return Counters{registered_.load(), deduplicated_.load(), conflicts_.load(), unregistered_.load()};
  }

 private:
  enum class Outcome : uint8_t { New, Deduplicated, Unchanged };

  // Scratch space of one registration, kept between registrations so a
  // warm registry allocates nothing for it. Guarded by write_mutex_.
  struct Scratch {
    std::vector<Outcome> outcome;
    std::vector<int64_t> old_entry;       // per record: its operator's entry in the old table, or -1
    std::vector<uint32_t> op_head;        // per record: the first record of the batch with its operator
    std::vector<uint32_t> next_same_op;   // per record: the next record with its operator, or UINT32_MAX
    std::vector<uint32_t> op_tail;        // per head record: the last record with its operator
    std::vector<uint32_t> batch_index;    // open addressing over the batch's operators: head + 1
    std::vector<uint32_t> entry_first;    // per old entry: its first new record, or UINT32_MAX
    std::vector<uint32_t> next_in_entry;  // per record: the next new record of the same old entry
    std::vector<Collision> conflicts;
    std::vector<std::size_t> lengths;  // of each record's strings, while the batch is built
  };
  static constexpr uint32_t kNone = UINT32_MAX;

  RegistrationResult invalid(const et_ops_manifest& m, const std::string& error) {
    return RegistrationResult(
        ET_OPS_ERROR_INVALID,
        fmt::format("invalid kernel manifest{}{}: {}", m.component ? " of component " : "",
                    m.component ? m.component : "", error),
        0, 0, 0);
  }

  RegistrationResult register_locked(const et_ops_manifest& m, const std::string& library,
                                     const PolicyChoice& policy) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    const Table& old = *current();
    BatchOwner batch(make_batch(m, library, sequence_ + 1, scratch_.lengths));
    const std::size_t n = batch->record_count;
    prepare_scratch(n, old);
    uint32_t registered = 0, deduplicated = 0, unchanged = 0, new_ops = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const Record& r = batch->records[i];
      const uint32_t head = group_by_operator(*batch, static_cast<uint32_t>(i));
      const Entry* old_entry = old.find(r.op, r.hash);
      scratch_.old_entry[i] = old_entry ? old_entry - old.entries_begin() : -1;
      new_ops += old_entry == nullptr && head == i;
      const Record* active = nullptr;
      bool same_function = false;
      if (old_entry != nullptr)
        for (const Record* const* c = old.records_of(*old_entry); c != old.records_of(*old_entry) + old_entry->count; ++c)
          if ((*c)->key_text == r.key_text) {
            if (active == nullptr) active = *c;
            same_function |= (*c)->fn == r.fn;
          }
      bool listed_twice = false;
      for (uint32_t j = head; j != i; j = scratch_.next_same_op[j])
        if (batch->records[j].key_text == r.key_text) {
          if (batch->records[j].fn == r.fn) same_function = true;
          else listed_twice = true;
        }
      if (same_function) {
        scratch_.outcome[i] = Outcome::Unchanged;
        ++unchanged;
      } else if (listed_twice) {
        return RegistrationResult(ET_OPS_ERROR_INVALID,
                                  fmt::format("invalid kernel manifest of component {}: {} [key {}] appears twice "
                                              "with different functions",
                                              m.component, r.op, r.is_fallback() ? "" : r.key_text),
                                  0, 0, 0);
      } else if (active == nullptr) {
        scratch_.outcome[i] = Outcome::New;
        ++registered;
      } else if (policy.policy == DuplicatePolicy::Fatal) {
        die(Collision{active, &r}, policy);
      } else if (active->schema == r.schema && active->fingerprint == r.fingerprint) {
        scratch_.outcome[i] = Outcome::Deduplicated;
        ++deduplicated;
      } else {
        scratch_.conflicts.push_back(Collision{active, &r});
      }
    }
    if (!scratch_.conflicts.empty()) {
      conflicts_ += scratch_.conflicts.size();
      return RegistrationResult(ET_OPS_ERROR_CONFLICT, conflict_message(batch->origin(), scratch_.conflicts), 0, 0, 0);
    }
    if (registered + deduplicated > 0) {
      publish(build_with(old, batch.get(), registered + deduplicated, new_ops));
      batch.release();  // the table holds it now
      sequence_ += n;
    }
    registered_ += registered;
    deduplicated_ += deduplicated;
    return RegistrationResult(ET_OPS_OK, {}, registered, deduplicated, unchanged);
  }

  void prepare_scratch(std::size_t n, const Table& old) {
    std::size_t capacity = 8;
    while (capacity < n * 2) capacity *= 2;
    scratch_.outcome.assign(n, Outcome::Unchanged);
    scratch_.old_entry.assign(n, -1);
    scratch_.op_head.assign(n, kNone);
    scratch_.next_same_op.assign(n, kNone);
    scratch_.op_tail.assign(n, kNone);
    scratch_.batch_index.assign(capacity, 0);
    scratch_.entry_first.assign(old.entries_end() - old.entries_begin(), kNone);
    scratch_.next_in_entry.assign(n, kNone);
    scratch_.conflicts.clear();
  }

  // Links record i after the batch's earlier records with the same
  // operator; returns the first of them (i itself when it is the first).
  uint32_t group_by_operator(const Batch& batch, uint32_t i) {
    const Record& r = batch.records[i];
    const std::size_t mask = scratch_.batch_index.size() - 1;
    for (std::size_t at = r.hash & mask;; at = (at + 1) & mask) {
      const uint32_t slot = scratch_.batch_index[at];
      if (slot == 0) {
        scratch_.batch_index[at] = i + 1;
        scratch_.op_head[i] = scratch_.op_tail[i] = i;
        return i;
      }
      const Record& first = batch.records[slot - 1];
      if (first.hash == r.hash && first.op == r.op) {
        const uint32_t head = slot - 1;
        scratch_.next_same_op[scratch_.op_tail[head]] = i;
        scratch_.op_tail[head] = i;
        scratch_.op_head[i] = head;
        return head;
      }
    }
  }

  // The old table plus the batch's accepted records, built once.
  TableOwner build_with(const Table& old, Batch* batch, std::size_t accepted, std::size_t new_ops) {
    const std::size_t old_entries = old.entries_end() - old.entries_begin();
    TableOwner next(Table::create(old_entries + new_ops, old.record_count() + accepted,
                                  (old.batches_end() - old.batches_begin()) + 1));
    for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b) next->add_batch(*b);
    next->add_batch(batch);
    // New records of existing operators, chained per old entry in batch order.
    std::vector<uint32_t>& first = scratch_.entry_first;
    for (std::size_t i = batch->record_count; i-- > 0;) {
      if (scratch_.outcome[i] == Outcome::Unchanged || scratch_.old_entry[i] < 0) continue;
      scratch_.next_in_entry[i] = first[scratch_.old_entry[i]];
      first[scratch_.old_entry[i]] = static_cast<uint32_t>(i);
    }
    for (std::size_t e = 0; e < old_entries; ++e) {
      const Entry& entry = old.entries_begin()[e];
      next->add_entry(entry.name, entry.hash);
      for (std::size_t k = 0; k < entry.count; ++k) next->add_record(old.records_of(entry)[k]);
      for (uint32_t i = first[e]; i != kNone; i = scratch_.next_in_entry[i]) next->add_record(&batch->records[i]);
    }
    for (std::size_t i = 0; i < batch->record_count; ++i) {
      if (scratch_.old_entry[i] >= 0 || scratch_.op_head[i] != i) continue;  // not the first of a new operator
      next->add_entry(batch->records[i].op, batch->records[i].hash);
      for (uint32_t j = static_cast<uint32_t>(i); j != kNone; j = scratch_.next_same_op[j])
        if (scratch_.outcome[j] != Outcome::Unchanged) next->add_record(&batch->records[j]);
    }
    next->finish();
    return next;
  }

  [[noreturn]] static void die(const Collision& collision, const PolicyChoice& policy) {
    std::string message = fatal_duplicate_message(collision, policy);
    std::fwrite(message.data(), 1, message.size(), stderr);
    std::fflush(stderr);
    std::abort();
  }

  // Only for writers, which hold write_mutex_: no other thread frees tables.
  const Table* current() const { return table_.load(std::memory_order_acquire); }

  void publish(TableOwner next) {
    retired_.reserve(retired_.size() + 1);  // so the push below cannot throw
    for (Batch* const* b = next->batches_begin(); b != next->batches_end(); ++b) ++(*b)->table_references;
    const Table* previous = table_.exchange(next.release(), std::memory_order_seq_cst);
    retired_.push_back(previous);
    reclaim();
  }

  // Frees every replaced table that no reader holds any more, and every
  // batch that no table holds.
  void reclaim() {
    auto freed = std::remove_if(retired_.begin(), retired_.end(), [](const Table* t) {
      if (is_hazardous(t)) return false;
      for (Batch* const* b = t->batches_begin(); b != t->batches_end(); ++b)
        if (--(*b)->table_references == 0) destroy_batch(*b);
      Table::destroy(t);
      return true;
    });
    retired_.erase(freed, retired_.end());
  }

  std::atomic<const Table*> table_{nullptr};
  std::mutex write_mutex_;
  std::vector<const Table*> retired_;  // replaced, maybe still read; guarded by write_mutex_
  Scratch scratch_;                    // guarded by write_mutex_
  uint64_t sequence_ = 0;              // guarded by write_mutex_
  std::atomic<uint64_t> registered_{0};
  std::atomic<uint64_t> deduplicated_{0};
  std::atomic<uint64_t> conflicts_{0};
  std::atomic<uint64_t> unregistered_{0};
};

// Never destroyed: kernel libraries may unregister from their own
// destructors after static destruction of this library has begun.
Registry& registry() {
  static Registry* instance = new Registry();
  return *instance;
}

}  // namespace detail

RegistrationResult register_manifest(const et_ops_manifest& manifest) {
  return detail::registry().register_manifest(manifest);
}

std::size_t unregister_library(std::string_view library_path) {
  return detail::registry().unregister(canonical_library_path(library_path));
}

et_ops_kernel_fn lookup(std::string_view op, const et_ops_tensor* const* tensors, std::size_t tensor_count) {
  return detail::registry().lookup(op, tensors, tensor_count).fn;
}

ResolvedKernel lookup_kernel(std::string_view op, const et_ops_tensor* const* tensors, std::size_t tensor_count) {
  return detail::registry().lookup(op, tensors, tensor_count);
}

bool has_operator(std::string_view op) { return detail::registry().has(op); }

std::vector<RecordInfo> registered_records() { return detail::registry().records(); }

Counters counters() { return detail::registry().counters(); }

std::string dump_records() {
  std::string out;
  for (const RecordInfo& r : registered_records())
    out += fmt::format("{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n", r.op, r.key.empty() ? "fallback" : r.key,
                       r.origin.component, r.origin.version, r.origin.library_path, r.fingerprint,
                       r.active ? "active" : "deduplicated", r.schema);
  return out;
}

std::string canonical_library_path(std::string_view path) {
  std::string text(path);
  char resolved[PATH_MAX];
  if (::realpath(text.c_str(), resolved) != nullptr) return resolved;
  return text;
}

}  // namespace et_ops
