// The fault-injection countdowns of registration and loading (see
// fault_injection.h).
#include "registry/fault_injection.h"

#include <atomic>
#include <new>

namespace et_ops::detail {
namespace {

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

AllocationFaultCountdown registration_faults;
AllocationFaultCountdown load_faults;

}  // namespace

void inject_registration_allocation_failure(int countdown) { registration_faults.arm(countdown); }
void maybe_inject_allocation_failure() { registration_faults.point(); }

void inject_load_allocation_failure(int countdown) { load_faults.arm(countdown); }
void maybe_fail_load_allocation() { load_faults.point(); }

}  // namespace et_ops::detail
