// The load fault-injection countdown (see fault_injection.h).
#include "runtime/fault_injection.h"

#include <atomic>
#include <new>

namespace et_ops::detail {
namespace {
std::atomic<int> load_failure_countdown{-1};
}

void inject_load_allocation_failure(int countdown) { load_failure_countdown.store(countdown); }

void maybe_fail_load_allocation() {
  int value = load_failure_countdown.load(std::memory_order_relaxed);
  while (value >= 0) {  // one decrement per point, even with loads on several threads
    if (load_failure_countdown.compare_exchange_weak(value, value - 1)) {
      if (value == 0) throw std::bad_alloc();
      return;
    }
  }
}

}  // namespace et_ops::detail
