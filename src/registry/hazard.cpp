#include "registry/hazard.h"

namespace et_ops::detail {
namespace {

std::atomic<HazardSlot*> slots_head{nullptr};

HazardSlot* acquire_slot() {
  for (HazardSlot* s = slots_head.load(std::memory_order_acquire); s != nullptr; s = s->next) {
    bool expected = false;
    if (!s->in_use.load(std::memory_order_relaxed) && s->in_use.compare_exchange_strong(expected, true))
      return s;
  }
  auto* slot = new HazardSlot();
  HazardSlot* head = slots_head.load(std::memory_order_relaxed);
  do {
    slot->next = head;
  } while (!slots_head.compare_exchange_weak(head, slot, std::memory_order_release, std::memory_order_relaxed));
  return slot;
}

// Gives the slot back when its thread exits. `cached_slot` is a plain
// pointer so the hot path has no TLS guard check; the owner, which has a
// destructor, is touched only when a thread first reads.
struct SlotOwner {
  HazardSlot* slot = nullptr;
  ~SlotOwner();
};

thread_local HazardSlot* cached_slot __attribute__((tls_model("initial-exec"))) = nullptr;

SlotOwner::~SlotOwner() {
  if (slot == nullptr) return;
  cached_slot = nullptr;
    slot->protected_pointer.store(nullptr, std::memory_order_release);
  slot->in_use.store(false, std::memory_order_release);
}

}  // namespace

HazardSlot& this_thread_hazard_slot() {
  if (cached_slot == nullptr) {
    thread_local SlotOwner owner;
    owner.slot = acquire_slot();
    cached_slot = owner.slot;
  }
  return *cached_slot;
}

HazardSlot* first_hazard_slot() { return slots_head.load(std::memory_order_acquire); }

bool is_hazardous(const void* pointer) {
  for (HazardSlot* s = first_hazard_slot(); s != nullptr; s = s->next)
    if (s->protected_pointer.load(std::memory_order_seq_cst) == pointer) return true;
  return false;
}

}  // namespace et_ops::detail
