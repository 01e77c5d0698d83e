// A test hook: make the N-th allocation point of the next registrations
// fail with std::bad_alloc, to prove a failed registration changes nothing.
#ifndef ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H
#define ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H

#include "et_ops/export.h"

namespace et_ops::detail {

// After `countdown` more allocation points, one throws std::bad_alloc.
// A negative countdown disables injection (the default).
ET_OPS_API void inject_registration_allocation_failure(int countdown);

// Called at the registry's allocation points.
void maybe_inject_allocation_failure();

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H
