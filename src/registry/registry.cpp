// The process-wide registry. Writers serialise on a mutex, build the next
// immutable Table and publish it through an atomic pointer; readers load
// that pointer under a hazard guard and never lock. A replaced table is
// freed once no reader holds it (hazard.h).
#include <dlfcn.h>
#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>

#include "registry/fault_injection.h"
#include "registry/hazard.h"
#include "registry/messages.h"
#include "registry/table.h"

namespace et_ops {
namespace detail {
namespace {

std::string validate(const et_ops_manifest& m) {
  if (m.abi_version != ET_OPS_ABI_VERSION)
    return fmt::format("unsupported ABI version {} (this registry speaks version {})", m.abi_version,
                       ET_OPS_ABI_VERSION);
  if (m.record_size < sizeof(et_ops_kernel_record))
    return fmt::format("record size {} is smaller than version {} records ({} bytes)", m.record_size,
                       ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record));
  if (m.component == nullptr || *m.component == '\0') return "the manifest names no component";
  if (m.record_count > 0 && m.records == nullptr) return "the manifest has records but no record array";
  return {};
}

const et_ops_kernel_record& record_at(const et_ops_manifest& m, std::size_t i) {
  // Records may be larger than ours (a newer builder); step by their size.
  return *reinterpret_cast<const et_ops_kernel_record*>(reinterpret_cast<const char*>(m.records) + i * m.record_size);
}

std::string validate_record(const et_ops_kernel_record& r, std::size_t i) {
  if (r.op == nullptr || *r.op == '\0') return fmt::format("record {} has no operator name", i);
  if (r.fn == nullptr) return fmt::format("record {} ({}) has no function", i, r.op);
  if (r.key == nullptr || !KernelKey::parse(r.key))
    return fmt::format("record {} ({}) has an invalid kernel key '{}'", i, r.op, r.key ? r.key : "(null)");
  if (r.schema == nullptr || r.fingerprint == nullptr)
    return fmt::format("record {} ({}) lacks a schema or fingerprint", i, r.op);
  return {};
}

// The shared object that holds `address`, by dladdr, canonicalised.
std::string library_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr && *info.dli_fname != '\0')
    return canonical_library_path(info.dli_fname);
  return canonical_library_path("/proc/self/exe");
}

}  // namespace

class Registry {
 public:
  Registry() : table_(new Table()) {}

  RegistrationResult register_manifest(const et_ops_manifest& m) {
    if (std::string error = validate(m); !error.empty()) return invalid(m, error);
    for (std::size_t i = 0; i < m.record_count; ++i)
      if (std::string error = validate_record(record_at(m, i), i); !error.empty()) return invalid(m, error);
    if (m.record_count == 0) return RegistrationResult(ET_OPS_OK, {}, 0, 0, 0);
    PolicyChoice policy = effective_duplicate_policy();
    if (!policy.ok()) return RegistrationResult(ET_OPS_ERROR_POLICY, policy.error, 0, 0, 0);
    try {
      return register_locked(m, policy);
    } catch (const std::bad_alloc&) {
      return RegistrationResult(ET_OPS_ERROR_NO_MEMORY,
                                fmt::format("out of memory while registering component {}; the registry is unchanged",
                                            m.component),
                                0, 0, 0);
    }
  }

  std::size_t unregister(const std::string& library_path) {
    std::lock_guard<std::mutex> lock(write_mutex_);
    std::vector<OpEntry> ops;
    std::size_t removed = 0;
    for (const OpEntry& entry : current()->ops()) {
      OpEntry kept{entry.name, entry.hash, nullptr, false, {}};
      for (const Slot& slot : entry.slots) {
        Slot remaining{slot.key, {}};
        for (const RecordPtr& r : slot.copies) {
          if (r->origin->library_path == library_path) ++removed;
          else remaining.copies.push_back(r);
        }
        if (!remaining.copies.empty()) kept.slots.push_back(std::move(remaining));
      }
      if (kept.slots.empty()) continue;
      kept.refresh();
      ops.push_back(std::move(kept));
    }
    if (removed > 0) {
      publish(std::move(ops));
      unregistered_ += removed;
    }
    return removed;
  }

  et_ops_kernel_fn lookup(std::string_view op, const et_ops_tensor* const* tensors, std::size_t count) const {
    HazardGuard<Table> table(table_);
    const OpEntry* entry = table->find(op);
    if (entry == nullptr) return nullptr;
    if (entry->has_specialised && count > 0)
      for (const Slot& slot : entry->slots)
        if (!slot.key.is_fallback() && slot.key.matches(tensors, count)) return slot.copies.front()->fn;
    return entry->fallback;
  }

  bool has(std::string_view op) const {
    HazardGuard<Table> table(table_);
    return table->find(op) != nullptr;
  }

  std::vector<RecordInfo> records() const {
    std::vector<std::pair<RecordPtr, bool>> all;
    HazardGuard<Table> table(table_);
    for (const OpEntry& entry : table->ops())
      for (const Slot& slot : entry.slots)
        for (std::size_t i = 0; i < slot.copies.size(); ++i) all.emplace_back(slot.copies[i], i == 0);
    std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
      const Record& x = *a.first;
      const Record& y = *b.first;
      if (x.op != y.op) return x.op < y.op;
      if (x.key_text != y.key_text) return x.key_text < y.key_text;
      return x.sequence < y.sequence;
    });
    std::vector<RecordInfo> out;
    out.reserve(all.size());
    for (const auto& [r, active] : all)
      out.push_back(RecordInfo{r->op, r->key_text, r->schema, r->fingerprint, *r->origin,
                               reinterpret_cast<const void*>(r->fn), active});
    return out;
  }

  Counters counters() const {
    return Counters{registered_.load(), deduplicated_.load(), conflicts_.load(), unregistered_.load()};
  }

 private:
  struct BatchOutcome {
    uint32_t registered = 0;
    uint32_t deduplicated = 0;
    uint32_t unchanged = 0;
    std::vector<Collision> conflicts;
  };

  RegistrationResult invalid(const et_ops_manifest& m, const std::string& error) {
    return RegistrationResult(
        ET_OPS_ERROR_INVALID,
        fmt::format("invalid kernel manifest{}{}: {}", m.component ? " of component " : "",
                    m.component ? m.component : "", error),
        0, 0, 0);
  }

  RegistrationResult register_locked(const et_ops_manifest& m, const PolicyChoice& policy) {
    auto origin = std::make_shared<Origin>(
        Origin{m.component, m.version ? m.version : "", library_of(reinterpret_cast<const void*>(record_at(m, 0).fn))});
    std::lock_guard<std::mutex> lock(write_mutex_);
    std::vector<OpEntry> ops = current()->ops();  // the next table, built aside
    // Reserve first: by_name views the names in place, so `ops` must never
    // reallocate (a short name lives inside its std::string object).
    ops.reserve(ops.size() + m.record_count);
    std::unordered_map<std::string_view, std::size_t> by_name;
    for (std::size_t i = 0; i < ops.size(); ++i) by_name.emplace(ops[i].name, i);

    BatchOutcome outcome;
    for (std::size_t i = 0; i < m.record_count; ++i) {
      maybe_inject_allocation_failure();
      RecordPtr incoming = make_record(record_at(m, i), origin);
      auto found = by_name.find(incoming->op);
      if (found == by_name.end()) {
        ops.push_back(OpEntry{incoming->op, hash_name(incoming->op), nullptr, false, {}});
        found = by_name.emplace(ops.back().name, ops.size() - 1).first;
      }
      if (!add_to_entry(ops[found->second], incoming, policy, outcome))
        return RegistrationResult(ET_OPS_ERROR_INVALID,
                                  fmt::format("invalid kernel manifest of component {}: {} [key {}] appears twice "
                                              "with different functions",
                                              m.component, incoming->op, incoming->key_text),
                                  0, 0, 0);
    }
    if (!outcome.conflicts.empty()) {
      conflicts_ += outcome.conflicts.size();
      return RegistrationResult(ET_OPS_ERROR_CONFLICT, conflict_message(*origin, outcome.conflicts), 0, 0, 0);
    }
    if (outcome.registered + outcome.deduplicated > 0) {
      for (OpEntry& e : ops) e.refresh();
      publish(std::move(ops));
    }
    registered_ += outcome.registered;
    deduplicated_ += outcome.deduplicated;
    return RegistrationResult(ET_OPS_OK, {}, outcome.registered, outcome.deduplicated, outcome.unchanged);
  }

  RecordPtr make_record(const et_ops_kernel_record& r, const std::shared_ptr<const Origin>& origin) {
    auto record = std::make_shared<Record>();
    record->op = r.op;
    record->key = *KernelKey::parse(r.key);
    record->key_text = record->key.text();
    record->schema = r.schema;
    record->fingerprint = r.fingerprint;
    record->fn = r.fn;
    record->origin = origin;
    record->sequence = ++sequence_;
    return record;
  }

  // Applies one incoming record to its operator entry. Returns false for a
  // manifest that lists the same operator and key twice.
  bool add_to_entry(OpEntry& entry, const RecordPtr& incoming, const PolicyChoice& policy, BatchOutcome& outcome) {
    auto slot = std::find_if(entry.slots.begin(), entry.slots.end(),
                             [&](const Slot& s) { return s.key == incoming->key; });
    if (slot == entry.slots.end()) {
      entry.slots.push_back(Slot{incoming->key, {incoming}});
      ++outcome.registered;
      return true;
    }
    for (const RecordPtr& copy : slot->copies)
      if (copy->fn == incoming->fn) {  // the very same code again: a no-op
        ++outcome.unchanged;
        return true;
      }
    const RecordPtr& active = slot->copies.front();
    if (active->origin == incoming->origin) return false;
    if (policy.policy == DuplicatePolicy::Fatal) die(Collision{active, incoming}, policy);
    if (active->schema == incoming->schema && active->fingerprint == incoming->fingerprint) {
      slot->copies.push_back(incoming);
      ++outcome.deduplicated;
    } else {
      outcome.conflicts.push_back(Collision{active, incoming});
    }
    return true;
  }

  [[noreturn]] static void die(const Collision& collision, const PolicyChoice& policy) {
    std::string message = fatal_duplicate_message(collision, policy);
    std::fwrite(message.data(), 1, message.size(), stderr);
    std::fflush(stderr);
    std::abort();
  }

  // Only for writers, which hold write_mutex_: no other thread frees tables.
  const Table* current() const { return table_.load(std::memory_order_acquire); }

  void publish(std::vector<OpEntry> ops) {
    auto next = std::make_unique<Table>(std::move(ops));
    retired_.reserve(retired_.size() + 1);  // so the push below cannot throw
    const Table* previous = table_.exchange(next.release(), std::memory_order_seq_cst);
    retired_.emplace_back(previous);
    reclaim();
  }

  // Frees every replaced table that no reader holds any more.
  void reclaim() {
    retired_.erase(std::remove_if(retired_.begin(), retired_.end(),
                                  [](const std::unique_ptr<const Table>& t) { return !is_hazardous(t.get()); }),
                   retired_.end());
  }

  std::atomic<const Table*> table_;
  std::mutex write_mutex_;
  std::vector<std::unique_ptr<const Table>> retired_;  // replaced, maybe still read; guarded by write_mutex_
  uint64_t sequence_ = 0;                              // guarded by write_mutex_
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
