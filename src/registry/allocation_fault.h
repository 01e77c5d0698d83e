// The mechanism behind the fault-injection test hooks of the registry and
// the loader: a countdown of allocation points after which one point
// throws std::bad_alloc.
#ifndef ET_OPS_SRC_REGISTRY_ALLOCATION_FAULT_H
#define ET_OPS_SRC_REGISTRY_ALLOCATION_FAULT_H

#include <atomic>
#include <new>

namespace et_ops::detail {

class AllocationFaultCountdown {
 public:
  // After `countdown` more points, one throws; a negative countdown
  // disables injection (the default).
  void arm(int countdown) { countdown_.store(countdown); }

  // Called at an allocation point: one decrement per point, even with
  // points reached on several threads at once.
  void point() {
    int value = countdown_.load(std::memory_order_relaxed);
    while (value >= 0) {
      if (countdown_.compare_exchange_weak(value, value - 1)) {
        if (value == 0) throw std::bad_alloc();
        return;
      }
    }
  }

 private:
  std::atomic<int> countdown_{-1};
};

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_ALLOCATION_FAULT_H
