// Resolving every instruction's kernel when a program loads, so a run never
// discovers a missing operator halfway through.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "et_ops/registry.h"
#include "registry/fault_injection.h"
#include "runtime/load_errors.h"
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

bool is_constant(const Program::Impl& program, uint32_t v) {
  const int32_t slot = program.slot_of_value[v];
  return slot >= 0 && program.tensor_slots[static_cast<std::size_t>(slot)].constant;
}

// Whether value v is, or (a tensor_list) holds, a constant tensor: a pointer
// into the read-only mapping of the file.
bool holds_constant(const Program::Impl& program, uint32_t v) {
  if (is_constant(program, v)) return true;
  for (uint32_t element : program.model.values[v].elements)
    if (element != kNoTensor && is_constant(program, element)) return true;
  return false;
}

bool passes_constants(const Program::Impl& program) {
  for (uint32_t v : program.arg_values)
    if (holds_constant(program, v)) return true;
  return false;
}

// A kernel that writes a constant would fault on the read-only mapping, so
// a program that names a constant where the kernel's schema says it writes
// ("Tensor(a!) out") is a load error. The registry read the schema once,
// at registration; schemas without annotations cannot be checked, and such
// a write still faults rather than corrupting the program.
void check_constant_writes(const Program::Impl& program, const std::vector<ResolvedKernel>& kernels) {
  if (!passes_constants(program)) return;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    const Program::Impl::Instruction& instruction = program.instructions[i];
    for (std::size_t a = 0; a < instruction.arg_count; ++a) {
      const uint32_t v = program.arg_values[instruction.first_arg + a];
      if (kernels[i].writes(a) && holds_constant(program, v))
        throw FormatError(fmt::format("{}: instructions[{}].args[{}] names value {}, a constant, where {} writes its "
                                      "argument {}; constants are read-only",
                                      program.path, i, a, v, program.model.instructions[i].op, a));
    }
  }
}

}  // namespace

std::vector<std::string> resolve_operators(Program::Impl& program) {
  std::vector<std::string> unresolved;
  std::unordered_set<const void*> pinned;
  std::vector<const et_ops_tensor*> tensors;
  std::vector<ResolvedKernel> kernels(program.instructions.size());
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    Program::Impl::Instruction& instruction = program.instructions[i];
    const std::string& op = program.model.instructions[i].op;
    tensor_arguments(program, instruction, tensors);
    kernels[i] = lookup_kernel(op, tensors.data(), tensors.size());
    instruction.fn = kernels[i].fn;
    instruction.prepared = kernels[i].prepared;
    if (instruction.fn == nullptr) {
      if (std::find(unresolved.begin(), unresolved.end(), op) == unresolved.end()) unresolved.push_back(op);
      continue;
    }
    const void* function = reinterpret_cast<const void*>(instruction.fn);
    if (pinned.insert(function).second) program.pins.pin(function);
    detail::maybe_fail_load_allocation();  // after a pin: a failed load must release it
  }
  if (unresolved.empty()) check_constant_writes(program, kernels);
  return unresolved;
}

}  // namespace et_ops::runtime
