// The load fault-injection countdown (see fault_injection.h).
#include "runtime/fault_injection.h"

#include "registry/allocation_fault.h"

namespace et_ops::detail {
namespace {
AllocationFaultCountdown load_faults;
}

void inject_load_allocation_failure(int countdown) { load_faults.arm(countdown); }

void maybe_fail_load_allocation() { load_faults.point(); }

}  // namespace et_ops::detail
