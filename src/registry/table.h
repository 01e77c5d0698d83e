// The registry's immutable snapshot: every operator with its kernels, in an
// open-addressing index keyed by operator name. A snapshot never changes
// once published, so readers use it without a lock.
#ifndef ET_OPS_SRC_REGISTRY_TABLE_H
#define ET_OPS_SRC_REGISTRY_TABLE_H

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "et_ops/registry.h"

namespace et_ops::detail {

struct Record {
  std::string op;
  KernelKey key;
  std::string key_text;
  std::string schema;
  std::string fingerprint;
  et_ops_kernel_fn fn = nullptr;
  std::shared_ptr<const Origin> origin;
  uint64_t sequence = 0;  // registration order, for stable introspection
};
using RecordPtr = std::shared_ptr<const Record>;

// Every copy registered for one (operator, key). The first copy is the one
// lookups return; the others are identical copies (first-wins) that take
// over if the first one's library is unregistered.
struct Slot {
  KernelKey key;
  std::vector<RecordPtr> copies;
};

struct OpEntry {
  std::string name;
  std::size_t hash = 0;
  et_ops_kernel_fn fallback = nullptr;  // the active fallback kernel, cached
  bool has_specialised = false;
  std::vector<Slot> slots;

  // Refreshes the cached fields after `slots` changed.
  void refresh() {
    fallback = nullptr;
    has_specialised = false;
    for (const Slot& s : slots) {
      if (s.key.is_fallback()) fallback = s.copies.front()->fn;
      else has_specialised = true;
    }
  }
};

inline std::size_t hash_name(std::string_view name) { return std::hash<std::string_view>()(name); }

class Table {
 public:
  Table() : index_(1, kEmpty) {}
  explicit Table(std::vector<OpEntry> ops) : ops_(std::move(ops)) {
    std::size_t capacity = 1;
    while (capacity < ops_.size() * 2) capacity *= 2;
    index_.assign(capacity, kEmpty);
    mask_ = capacity - 1;
    for (uint32_t i = 0; i < ops_.size(); ++i) {
      std::size_t at = ops_[i].hash & mask_;
      while (index_[at] != kEmpty) at = (at + 1) & mask_;
      index_[at] = i;
    }
  }

  const OpEntry* find(std::string_view name) const {
    const std::size_t hash = hash_name(name);
    for (std::size_t at = hash & mask_;; at = (at + 1) & mask_) {
      const uint32_t i = index_[at];
      if (i == kEmpty) return nullptr;
      const OpEntry& e = ops_[i];
      if (e.hash == hash && e.name == name) return &e;
    }
  }

  const std::vector<OpEntry>& ops() const { return ops_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  std::vector<OpEntry> ops_;
  std::vector<uint32_t> index_;
  std::size_t mask_ = 0;
};

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_TABLE_H
