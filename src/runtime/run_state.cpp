// Building a run state (the one place a state allocates) and running it.
#include <fmt/format.h>

#include <cstring>

#include "runtime/memory_plan.h"
#include "runtime/program_impl.h"
#include "runtime/run_state_impl.h"

namespace et_ops {

RunState::Impl::Impl(const Program::Impl& owner) : program(&owner) {
  // Touch every page now, so the first run does not pay for page faults and
  // tensors start zeroed.
  const std::size_t bytes = owner.planned_bytes > 0 ? owner.planned_bytes : runtime::kTensorAlignment;
  arena.reset(static_cast<uint8_t*>(std::aligned_alloc(runtime::kTensorAlignment, bytes)));
  if (!arena) throw std::bad_alloc();
  std::memset(arena.get(), 0, bytes);
  place_tensors();
  link_values();
  link_calls();
  link_inputs_outputs();
}

void RunState::Impl::place_tensors() {
  tensors.reserve(program->tensor_slots.size());
  for (const Program::Impl::TensorSlot& slot : program->tensor_slots) {
    tensors.push_back(slot.prototype);
    if (!slot.constant) tensors.back().data = arena.get() + slot.arena_offset;
  }
}

void RunState::Impl::link_values() {
  values = program->value_templates;
  const auto& model = program->model;
  std::size_t element_count = 0;
  for (const auto& value : model.values) element_count += value.elements.size();
  list_elements.reserve(element_count);  // never reallocated: lists point into it
  for (std::size_t v = 0; v < values.size(); ++v) {
    if (program->slot_of_value[v] >= 0) values[v].u.tensor = tensor_of(static_cast<uint32_t>(v));
    if (model.values[v].kind != runtime::ValueKind::TensorList) continue;
    values[v].u.tensor_list.data = list_elements.data() + list_elements.size();
    for (uint32_t element : model.values[v].elements) list_elements.push_back(tensor_of(element));
  }
}

et_ops_tensor* RunState::Impl::tensor_of(uint32_t value) {
  return &tensors[static_cast<std::size_t>(program->slot_of_value[value])];
}

void RunState::Impl::link_calls() {
  arg_pointers.reserve(program->arg_values.size());
  for (uint32_t v : program->arg_values) arg_pointers.push_back(&values[v]);
  calls.reserve(program->instructions.size());
  for (const Program::Impl::Instruction& instruction : program->instructions)
    calls.push_back(Call{instruction.fn, arg_pointers.data() + instruction.first_arg, instruction.arg_count});
}

void RunState::Impl::link_inputs_outputs() {
  const auto& model = program->model;
  for (uint32_t v : model.inputs) inputs.push_back(&tensors[static_cast<std::size_t>(program->slot_of_value[v])]);
  for (std::size_t i = 0; i < model.outputs.size(); ++i) {
    const int32_t slot = program->slot_of_value[model.outputs[i]];
    outputs.push_back(slot >= 0 ? &tensors[static_cast<std::size_t>(slot)] : &program->non_tensor_outputs[i].tensor);
  }
}

RunResult RunState::Impl::execute() {
  context.reset();
  et_ops_kernel_context* raw = context.raw();
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const Call& call = calls[i];
    call.fn(raw, call.args, call.arg_count);
    if (raw->failed) return failure(i);
  }
  return RunResult{};
}

RunResult RunState::Impl::failure(std::size_t instruction) {
  et_ops_kernel_context* raw = context.raw();
  raw->message[ET_OPS_MESSAGE_CAPACITY - 1] = '\0';  // a kernel may have filled it without a terminator
  const char* message = raw->message[0] != '\0' ? raw->message : "(the kernel gave no message)";
  RunResult result;
  result.ok = false;
  result.failed_instruction = instruction;
  result.error = fmt::format("instruction {} ({}): {}", instruction, program->model.instructions[instruction].op,
                             message);
  return result;
}

RunState::RunState(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RunState::~RunState() = default;

TensorRef RunState::input(std::size_t i) { return TensorRef(*impl_->inputs.at(i)); }

bool RunState::set_input(std::size_t i, const void* data, std::size_t nbytes, std::string* error) {
  if (i >= impl_->inputs.size()) {
    if (error) *error = fmt::format("input {} does not exist: the program has {} inputs", i, impl_->inputs.size());
    return false;
  }
  TensorRef input(*impl_->inputs[i]);
  if (nbytes != input.nbytes()) {
    if (error) *error = fmt::format("input {} takes {} bytes, got {}", i, input.nbytes(), nbytes);
    return false;
  }
  if (nbytes > 0) std::memcpy(input.data(), data, nbytes);
  return true;
}

TensorRef RunState::output(std::size_t i) const { return TensorRef(*impl_->outputs.at(i)); }

}  // namespace et_ops
