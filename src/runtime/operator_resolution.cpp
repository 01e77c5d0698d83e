// Resolving every instruction's kernel when a program loads, so a run never
// discovers a missing operator halfway through.
#include <algorithm>
#include <unordered_set>

#include "et_ops/registry.h"
#include "runtime/program_impl.h"

namespace et_ops::runtime {
namespace {

// The instruction's tensor arguments in argument order, for kernel-key matching.
void tensor_arguments(const Program::Impl& program, const Program::Impl::Instruction& instruction,
                      std::vector<const et_ops_tensor*>& tensors) {
  tensors.clear();
  for (std::size_t a = 0; a < instruction.arg_count; ++a) {
    const int32_t slot = program.slot_of_value[program.arg_values[instruction.first_arg + a]];
    if (slot >= 0) tensors.push_back(&program.tensor_slots[static_cast<std::size_t>(slot)].prototype);
  }
}

}  // namespace

std::vector<std::string> resolve_operators(Program::Impl& program) {
  std::vector<std::string> unresolved;
  std::unordered_set<const void*> pinned;
  std::vector<const et_ops_tensor*> tensors;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    Program::Impl::Instruction& instruction = program.instructions[i];
    const std::string& op = program.model.instructions[i].op;
    tensor_arguments(program, instruction, tensors);
    instruction.fn = lookup(op, tensors.data(), tensors.size());
    if (instruction.fn == nullptr) {
      if (std::find(unresolved.begin(), unresolved.end(), op) == unresolved.end()) unresolved.push_back(op);
      continue;
    }
    const void* function = reinterpret_cast<const void*>(instruction.fn);
    if (pinned.insert(function).second) program.pins.pin(function);
  }
  return unresolved;
}

}  // namespace et_ops::runtime
