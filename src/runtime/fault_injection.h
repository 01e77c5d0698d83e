// A test hook, the loader's counterpart of the registry's
// inject_registration_allocation_failure: make the N-th allocation point of
// the next program loads throw std::bad_alloc, to prove that a load that
// runs out of memory reports a load error and releases everything it took
// (the mapping, the descriptor, library pins, every allocation).
#ifndef ET_OPS_SRC_RUNTIME_FAULT_INJECTION_H
#define ET_OPS_SRC_RUNTIME_FAULT_INJECTION_H

#include "et_ops/export.h"

namespace et_ops::detail {

// After `countdown` more load allocation points, one throws std::bad_alloc.
// A negative countdown disables injection (the default).
ET_OPS_API void inject_load_allocation_failure(int countdown);

// Called at the loader's allocation points (Program::load and
// Program::inspect): throws std::bad_alloc when the countdown reaches zero.
void maybe_fail_load_allocation();

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_RUNTIME_FAULT_INJECTION_H
