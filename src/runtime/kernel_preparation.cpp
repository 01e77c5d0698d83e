// Linking instruction arguments to a set of tensors, and the load-time
// step of prepared kernels.
#include <fmt/format.h>

#include "et_ops/kernel_context.h"
#include "registry/fault_injection.h"
#include "runtime/load_errors.h"
#include "runtime/program_impl.h"

namespace et_ops::runtime {

void LinkedArguments::link(const Program::Impl& program, std::vector<et_ops_tensor>& tensors) {
  auto tensor_of = [&](uint32_t v) { return &tensors[static_cast<std::size_t>(program.slot_of_value[v])]; };
  values = program.value_templates;
  const auto& model = program.model;
  std::size_t element_count = 0;
  for (const auto& value : model.values) element_count += value.elements.size();
  list_elements.clear();
  list_elements.reserve(element_count);  // never reallocated: lists point into it
  for (std::size_t v = 0; v < values.size(); ++v) {
    if (program.slot_of_value[v] >= 0) values[v].u.tensor = tensor_of(static_cast<uint32_t>(v));
    if (model.values[v].kind != ValueKind::TensorList && model.values[v].kind != ValueKind::OptionalTensorList)
      continue;
    values[v].u.tensor_list.data = list_elements.data() + list_elements.size();
    for (uint32_t element : model.values[v].elements)
      list_elements.push_back(element == kNoTensor ? nullptr : tensor_of(element));
  }
  arg_pointers.clear();
  arg_pointers.reserve(program.arg_values.size());
  for (uint32_t v : program.arg_values) arg_pointers.push_back(&values[v]);
}

void prepare_kernels(Program::Impl& program) {
  std::size_t prepared_count = 0;
  for (const Program::Impl::Instruction& instruction : program.instructions)
    prepared_count += instruction.prepared != nullptr;
  if (prepared_count == 0) return;
  program.prepared_states.reserve(prepared_count);
  // What prepare sees: constants with their data, other tensors with data null.
  std::vector<et_ops_tensor> tensors;
  tensors.reserve(program.tensor_slots.size());
  for (const Program::Impl::TensorSlot& slot : program.tensor_slots) tensors.push_back(slot.prototype);
  LinkedArguments arguments;
  arguments.link(program, tensors);
  KernelContext context;
  for (std::size_t i = 0; i < program.instructions.size(); ++i) {
    Program::Impl::Instruction& instruction = program.instructions[i];
    if (instruction.prepared == nullptr) continue;
    context.reset();
    void* state = instruction.prepared->prepare(context.raw(), arguments.of(instruction), instruction.arg_count);
    if (!context.ok() || state == nullptr) {
      if (state != nullptr) instruction.prepared->release_prepared(state);
      const std::string_view message = context.ok() ? "its prepare function returned no state" : context.message();
      throw FormatError(fmt::format("{}: instruction {} ({}) cannot be prepared: {}", program.path, i,
                                    program.model.instructions[i].op, message));
    }
    program.prepared_states.add(instruction.prepared->release_prepared, state);
    instruction.prepared_state = state;
    detail::maybe_fail_load_allocation();  // after the add: a failed load must release it
  }
}

}  // namespace et_ops::runtime
