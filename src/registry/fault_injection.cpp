// The registration fault-injection countdown (see fault_injection.h).
#include "registry/fault_injection.h"

#include "registry/allocation_fault.h"

namespace et_ops::detail {
namespace {
AllocationFaultCountdown registration_faults;
}

void inject_registration_allocation_failure(int countdown) { registration_faults.arm(countdown); }

void maybe_inject_allocation_failure() { registration_faults.point(); }

}  // namespace et_ops::detail
