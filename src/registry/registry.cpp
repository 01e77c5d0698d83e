// The process-wide registry. Writers serialise on a mutex, build the next
// immutable Table (one allocation for the new batch, one for the table)
// and publish it through an atomic pointer; readers load that pointer under
// a hazard guard and never lock. A replaced table is freed once no reader
// holds it (hazard.h), and a batch once no table holds it.
#include <dlfcn.h>
#include <link.h>
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

bool is_valid_key(const char* key) { return key != nullptr && (*key == '\0' || KernelKey::parse(key).ok()); }

bool is_complete(const et_ops_prepared_kernel* p) {
  return p != nullptr && p->struct_size >= sizeof(et_ops_prepared_kernel) && p->prepare != nullptr &&
         p->release_prepared != nullptr && p->run != nullptr &&
         (p->instantiate == nullptr || p->release_instance != nullptr);
}

// False, with the reason in `error`, for an incomplete record i (the
// reason is only formatted then: every record of every batch passes here).
bool validate_record(const et_ops_manifest& m, std::size_t i, std::string& error) {
  const et_ops_kernel_record& r = manifest_record(m, i);
  const et_ops_kernel_record_v2* v2 = manifest_record_v2(m, i);
  if (r.op == nullptr || *r.op == '\0') error = fmt::format("record {} has no operator name", i);
  else if (r.fn == nullptr) error = fmt::format("record {} ({}) has no function", i, r.op);
  else if (!is_valid_key(r.key))
    error = fmt::format("record {} ({}) has an invalid kernel key '{}'", i, r.op, r.key ? r.key : "(null)");
  else if (r.schema == nullptr || r.fingerprint == nullptr)
    error = fmt::format("record {} ({}) lacks a schema or fingerprint", i, r.op);
  else if (v2 != nullptr && v2->kind != ET_OPS_KERNEL_PLAIN && v2->kind != ET_OPS_KERNEL_PREPARED)
    error = fmt::format("record {} ({}) has an unknown kernel kind {}", i, r.op, v2->kind);
  else if (v2 != nullptr && v2->kind == ET_OPS_KERNEL_PREPARED && !is_complete(v2->prepared))
    error = fmt::format("record {} ({}) is a prepared kernel without its prepare, release and run functions", i,
                        r.op);
  else return true;
  return false;
}

// The shared object that holds `address`, canonicalised. A shared object
// is named by its link map; the executable's name there is empty (dladdr
// would give argv[0], relative to wherever the process started), so the
// executable is /proc/self/exe, resolved once (and never destroyed, like
// the registry).
std::string library_of(const void* address) {
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(address, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0 && map != nullptr &&
      map->l_name != nullptr && *map->l_name != '\0')
    return canonical_library_path(map->l_name);
  static const std::string* executable = new std::string(canonical_library_path("/proc/self/exe"));
  return *executable;
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
    table_.store(Table::create(0, 0, 0));
  }

  RegistrationResult register_manifest(const et_ops_manifest& m) {
    if (std::string error = validate(m); !error.empty()) return invalid(m, error);
    std::string error;
    for (std::size_t i = 0; i < m.record_count; ++i)
      if (!validate_record(m, i, error)) return invalid(m, error);
    if (m.record_count == 0) return Registration{0, 0, 0};
    Result<PolicyChoice> policy = effective_duplicate_policy();
    if (!policy) return policy.status();
    const std::string library = library_of(reinterpret_cast<const void*>(manifest_record(m, 0).fn));
    try {
      return register_locked(m, library, *policy);
    } catch (const std::bad_alloc&) {
      return Status(StatusCode::NoMemory, fmt::format("out of memory while registering component {}; the registry is unchanged",
                                            m.component));
    }
  }

  std::size_t unregister(const std::string& library_path) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    const Table& old = *current();
    auto removed_here = [&](const Record* r) { return r->batch().library_path == library_path; };
    std::size_t entries = 0, records = 0, removed = 0, batches = 0;
    for (const Entry* e = old.entries_begin(); e != old.entries_end(); ++e) {
      const std::size_t kept = std::count_if(old.records_of(*e), old.records_of(*e) + e->count(),
                                             [&](const Record* r) { return !removed_here(r); });
      records += kept;
      removed += e->count() - kept;
      entries += kept > 0;
    }
    if (removed == 0) return 0;
    for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b) batches += (*b)->library_path != library_path;
    TableOwner next(Table::create(entries, records, batches));
    for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b)
      if ((*b)->library_path != library_path) next->add_batch(*b);
    for (const Entry* e = old.entries_begin(); e != old.entries_end(); ++e) {
      const Record* const* rs = old.records_of(*e);
      if (std::all_of(rs, rs + e->count(), removed_here)) continue;
      const uint32_t number = next->add_entry(e->name(), e->hash);
      next->begin_records(number);
      for (std::size_t i = 0; i < e->count(); ++i)
        if (!removed_here(rs[i])) next->add_record(rs[i]);
      next->end_records(number);
    }
    publish(std::move(next));
    unregistered_ += removed;
    return removed;
  }

  et_ops_kernel_fn lookup_function(std::string_view op, const et_ops_tensor* const* tensors, std::size_t count) const {
    const uint32_t hash = hash_name(op);
    HazardGuard<Table> table(table_);
    const Entry* entry = table->find(op, hash);
    if (entry == nullptr) return nullptr;
    if (!entry->has_specialised() || count == 0) return entry->fallback;
    const Record* chosen = choose(*table.get(), *entry, tensors, count);
    return chosen ? chosen->fn : nullptr;
  }

  ResolvedKernel lookup(std::string_view op, const et_ops_tensor* const* tensors, std::size_t count) const {
    const uint32_t hash = hash_name(op);
    HazardGuard<Table> table(table_);
    const Entry* entry = table->find(op, hash);
    if (entry == nullptr) return {};
    const Record* chosen = choose(*table.get(), *entry, tensors, count);
    return chosen ? chosen->resolved() : ResolvedKernel{};
  }

  bool has(std::string_view op) const {
    const uint32_t hash = hash_name(op);
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
        for (std::size_t i = 0; i < e->count(); ++i) {
          const Record& r = *rs[i];
          out.push_back(RecordInfo{std::string(r.op()), std::string(r.key_text()), r.schema(),
                                   std::string(r.fingerprint()), r.batch().origin(),
                                   reinterpret_cast<const void*>(r.fn), is_active(rs, i)});
          sequences.push_back(r.sequence());
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
    std::vector<MeasuredRecord> measured;  // per record, from building the batch
    std::vector<Outcome> outcome;          // per record
    // Each entry's records of the batch, chained: from its latest record
    // back while they are placed, then reversed into batch order.
    std::vector<uint32_t> last_of_entry;  // per entry of the next table
    std::vector<uint32_t> next_same_op;   // per record
    std::vector<Collision> conflicts;
  };
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr std::size_t kPrefetchAhead = 16;

  struct Tally {
    uint32_t registered = 0, deduplicated = 0, unchanged = 0;
  };

  // Lays out accepted records while they are placed, as long as the batch
  // allows it (the common case: every accepted record's operator is new to
  // the table, and an operator's records are consecutive); lay_out() does
  // it afterwards when the batch does not.
  class InOrderLayout {
   public:
    InOrderLayout(Table& next, std::size_t old_entries) : next_(next), old_entries_(old_entries) {}
    bool holds() const { return holds_; }
    void append(uint32_t number, const Record& r) {
      if (!holds_) return;
      if (number < old_entries_ || (number != open_ && number + 1 != next_.entry_count())) {
        holds_ = false;
        return;
      }
      if (number != open_) {
        end();
        next_.begin_records(number);
        open_ = number;
      }
      next_.add_record(&r);
    }
    void end() {
      if (open_ != kNone) next_.end_records(open_);
      open_ = kNone;
    }

   private:
    Table& next_;
    std::size_t old_entries_;
    bool holds_ = true;
    uint32_t open_ = kNone;  // the entry taking records
  };

  // A matching specialised record, else the active fallback.
  static const Record* choose(const Table& table, const Entry& entry, const et_ops_tensor* const* tensors,
                              std::size_t count) {
    if (entry.has_specialised() && count > 0)
      if (const Record* r = table.specialised_match(entry, tensors, count)) return r;
    return table.fallback_record(entry);
  }

  RegistrationResult invalid(const et_ops_manifest& m, const std::string& error) {
    return Status(StatusCode::Invalid, fmt::format("invalid kernel manifest{}{}: {}", m.component ? " of component " : "",
                    m.component ? m.component : "", error));
  }

  // Builds the batch and, once, the next table: the old entries with their
  // records, then each record into its operator's entry (found or added
  // through the next table's own index).
  RegistrationResult register_locked(const et_ops_manifest& m, const std::string& library,
                                     const PolicyChoice& policy) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    const Table& old = *current();
    BatchOwner batch(make_batch(m, library, sequence_ + 1, scratch_.measured));
    const std::size_t n = batch->record_count;
    TableOwner next(Table::create(old.entry_count() + n, old.record_count() + n, old.batch_count() + 1));
    copy_entries(old, *next);
    Tally tally;
    InOrderLayout in_order(*next, old.entry_count());
    if (const Record* twice = place_records(old, *batch, *next, policy, tally, in_order))
      return Status(StatusCode::Invalid, fmt::format("invalid kernel manifest of component {}: {} [key {}] appears twice "
                                            "with different functions",
                                            m.component, twice->op(), twice->key_text()));
    if (!scratch_.conflicts.empty()) {
      conflicts_ += scratch_.conflicts.size();
      return Status(StatusCode::Conflict, conflict_message(batch->origin(), scratch_.conflicts));
    }
    if (tally.registered + tally.deduplicated > 0) {
      if (in_order.holds()) in_order.end();
      else lay_out(old, *batch, *next);
      for (Batch* const* b = old.batches_begin(); b != old.batches_end(); ++b) next->add_batch(*b);
      next->add_batch(batch.get());
      publish(std::move(next));
      batch.release();  // the table holds it now
      sequence_ += n;
    }
    registered_ += tally.registered;
    deduplicated_ += tally.deduplicated;
    return Registration{tally.registered, tally.deduplicated, tally.unchanged};
  }

  // What the registry holds already of a record's operator and key: in the
  // old table's entry `number`, and among the batch's earlier records.
  struct Match {
    const Record* active = nullptr;  // the old table's active copy
    bool same_function = false;      // the very same function, in either
    bool listed_twice = false;       // the batch lists the key with another function
  };
  Match match(const Table& old, const Batch& batch, uint32_t number, const Record& r) const {
    Match found;
    const std::string_view key = r.key_text();
    if (number < old.entry_count()) {
      const Entry& entry = old.entries_begin()[number];
      for (const Record* const* c = old.records_of(entry); c != old.records_of(entry) + entry.count(); ++c)
        if ((*c)->key_text() == key) {
          if (found.active == nullptr) found.active = *c;
          found.same_function |= (*c)->fn == r.fn;
        }
    }
    for (uint32_t j = scratch_.last_of_entry[number]; j != kNone; j = scratch_.next_same_op[j])
      if (batch.records()[j].key_text() == key) {
        if (batch.records()[j].fn == r.fn) found.same_function = true;
        else found.listed_twice = true;
      }
    return found;
  }

  // Decides each record's outcome and links it into its entry of `next`.
  // Returns a record listed twice with different functions, if any;
  // gathers conflicts in the scratch space; aborts under the fatal policy.
  const Record* place_records(const Table& old, const Batch& batch, Table& next, const PolicyChoice& policy,
                              Tally& tally, InOrderLayout& in_order) {
    const std::size_t n = batch.record_count;
    scratch_.outcome.resize(n);
    scratch_.next_same_op.resize(n);
    scratch_.last_of_entry.assign(old.entry_count() + n, kNone);
    scratch_.conflicts.clear();
    const MeasuredRecord* measured = scratch_.measured.data();
    for (std::size_t i = 0; i < n; ++i) {
      // The index is the one part of the table read at random: ask for the
      // slots a few records ahead.
      if (i + kPrefetchAhead < n) next.prefetch_slot(measured[i + kPrefetchAhead].hash);
      const Record& r = batch.records()[i];
      const std::size_t entries = next.entry_count();
      const uint32_t number = next.find_or_add_entry(r.op(), measured[i].hash);
      // An entry the record has just added holds nothing yet.
      const Match found = next.entry_count() > entries ? Match{} : match(old, batch, number, r);
      scratch_.next_same_op[i] = scratch_.last_of_entry[number];
      scratch_.last_of_entry[number] = static_cast<uint32_t>(i);
      Outcome& outcome = scratch_.outcome[i];
      outcome = Outcome::Unchanged;
      if (found.same_function) {
        ++tally.unchanged;
      } else if (found.listed_twice) {
        return &r;
      } else if (found.active == nullptr) {
        outcome = Outcome::New;
        ++tally.registered;
        in_order.append(number, r);
      } else if (policy.policy == DuplicatePolicy::Fatal) {
        die(Collision{found.active, &r}, policy);
      } else if (found.active->same_schema(r) && found.active->fingerprint() == r.fingerprint()) {
        outcome = Outcome::Deduplicated;
        ++tally.deduplicated;
        in_order.append(number, r);
      } else {
        scratch_.conflicts.push_back(Collision{found.active, &r});  // the batch is rejected
      }
    }
    return nullptr;
  }

  // The old table's entries with their records, laid out.
  static void copy_entries(const Table& old, Table& next) {
    for (const Entry* e = old.entries_begin(); e != old.entries_end(); ++e) {
      const uint32_t number = next.add_entry(e->name(), e->hash);
      next.begin_records(number);
      for (std::size_t k = 0; k < e->count(); ++k) next.add_record(old.records_of(*e)[k]);
      next.end_records(number);
    }
  }

  // Every entry's records again, in entry order: the old ones, then the
  // batch's accepted ones in batch order.
  void lay_out(const Table& old, const Batch& batch, Table& next) {
    next.clear_records();
    for (uint32_t number = 0; number < next.entry_count(); ++number) {
      next.begin_records(number);
      if (number < old.entry_count()) {
        const Entry& entry = old.entries_begin()[number];
        for (std::size_t k = 0; k < entry.count(); ++k) next.add_record(old.records_of(entry)[k]);
      }
      for (uint32_t j = reverse_chain(scratch_.last_of_entry[number]); j != kNone; j = scratch_.next_same_op[j])
        if (scratch_.outcome[j] != Outcome::Unchanged) next.add_record(&batch.records()[j]);
      next.end_records(number);
    }
  }

  // Reverses a chain of next_same_op links; returns its new first record.
  uint32_t reverse_chain(uint32_t last) {
    uint32_t first = kNone;
    while (last != kNone) {
      const uint32_t previous = scratch_.next_same_op[last];
      scratch_.next_same_op[last] = first;
      first = last;
      last = previous;
    }
    return first;
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
  return detail::registry().lookup_function(op, tensors, tensor_count);
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
