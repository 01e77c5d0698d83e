// Test hooks: make the N-th allocation point of the next registrations, or
// of the next program loads, throw std::bad_alloc, to prove that a failed
// registration changes nothing and that a load that runs out of memory
// reports a load error and releases everything it took (the mapping, the
// descriptor, library pins, every allocation).
#ifndef ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H
#define ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H

#include "et_ops/export.h"

namespace et_ops::detail {

// After `countdown` more allocation points, one throws std::bad_alloc.
// A negative countdown disables injection (the default).
ET_OPS_API void inject_registration_allocation_failure(int countdown);
ET_OPS_API void inject_load_allocation_failure(int countdown);

// Called at the registry's allocation points.
void maybe_inject_allocation_failure();
// Called at the loader's allocation points (Program::load and
// Program::inspect).
void maybe_fail_load_allocation();

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_FAULT_INJECTION_H
