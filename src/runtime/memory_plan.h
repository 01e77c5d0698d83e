// Planning a run state's activation memory: every non-constant tensor gets
// an offset in one arena, and tensors whose lifetimes do not overlap share
// bytes, so a long chain of intermediates costs a few buffers, not one each.
#ifndef ET_OPS_SRC_RUNTIME_MEMORY_PLAN_H
#define ET_OPS_SRC_RUNTIME_MEMORY_PLAN_H

#include <cstdint>
#include <vector>

#include "runtime/program_model.h"

namespace et_ops::runtime {

inline constexpr uint64_t kTensorAlignment = 64;

struct MemoryPlan {
  // Per value: the arena offset of a non-constant tensor, else 0.
  std::vector<uint64_t> offsets;
  uint64_t total_bytes = 0;
  // The most bytes live at once while the instructions run in order: no
  // plan of this program needs fewer (total_bytes minus this is what
  // fragmentation costs).
  uint64_t peak_live_bytes = 0;
};

// Throws FormatError when the plan exceeds `max_bytes`.
MemoryPlan plan_memory(const ProgramModel& model, uint64_t max_bytes);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_MEMORY_PLAN_H
