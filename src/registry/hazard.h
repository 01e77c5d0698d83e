// Safe reclamation of replaced registry tables without locking readers.
//
// Each reading thread owns a hazard slot. A reader publishes the table it is
// about to read in its slot and re-checks that the table is still current;
// a writer frees a replaced table only once no slot holds it. The reader's
// cost is one atomic exchange and one store.
#ifndef ET_OPS_SRC_REGISTRY_HAZARD_H
#define ET_OPS_SRC_REGISTRY_HAZARD_H

#include <atomic>

namespace et_ops::detail {

struct HazardSlot {
  std::atomic<const void*> protected_pointer{nullptr};
  std::atomic<bool> in_use{true};
  HazardSlot* next = nullptr;  // slots are never freed; threads reuse them
};

// This thread's slot (acquired on first use, released at thread exit).
HazardSlot& this_thread_hazard_slot();

// The first slot of the process-wide list.
HazardSlot* first_hazard_slot();

// Whether any thread currently protects `pointer`.
bool is_hazardous(const void* pointer);

// Loads `source` and protects the loaded pointer until the guard ends.
template <typename T>
class HazardGuard {
 public:
  explicit HazardGuard(const std::atomic<const T*>& source) : slot_(this_thread_hazard_slot()) {
    const T* value = source.load(std::memory_order_acquire);
    while (true) {
      slot_.protected_pointer.exchange(value, std::memory_order_seq_cst);
      const T* again = source.load(std::memory_order_seq_cst);
      if (again == value) break;
      value = again;
    }
    value_ = value;
  }
  ~HazardGuard() { slot_.protected_pointer.store(nullptr, std::memory_order_release); }
  HazardGuard(const HazardGuard&) = delete;
  HazardGuard& operator=(const HazardGuard&) = delete;

  const T* get() const { return value_; }
  const T* operator->() const { return value_; }

 private:
  HazardSlot& slot_;
  const T* value_ = nullptr;
};

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_HAZARD_H
