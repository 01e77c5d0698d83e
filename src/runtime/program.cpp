// Program's accessors, run-state creation and the run itself.
#include "et_ops/program.h"

#include <fmt/format.h>

#include <new>
#include <stdexcept>
#include <unordered_map>

#include "et_ops/registry.h"

#include "runtime/program_impl.h"
#include "runtime/run_state_impl.h"
#include "runtime/symbols.h"

namespace et_ops {

const std::string& Program::name() const { return impl_->model.name; }
const std::string& Program::path() const { return impl_->path; }
std::size_t Program::instruction_count() const { return impl_->instructions.size(); }
const std::vector<std::string>& Program::operators() const { return impl_->operators; }
std::size_t Program::input_count() const { return impl_->input_specs.size(); }
std::size_t Program::output_count() const { return impl_->output_specs.size(); }
const TensorSpec& Program::input_spec(std::size_t i) const { return impl_->input_specs.at(i); }
const TensorSpec& Program::output_spec(std::size_t i) const { return impl_->output_specs.at(i); }
std::vector<SizeBounds> Program::input_bounds(std::size_t i) const {
  const runtime::TensorModel& input = impl_->model.values[impl_->model.inputs.at(i)].tensor;
  std::vector<SizeBounds> bounds;
  for (std::size_t d = 0; d < input.spec.sizes.size(); ++d)
    bounds.push_back(input.symbolic_sizes.empty() ? SizeBounds{input.spec.sizes[d], input.spec.sizes[d]}
                                                  : runtime::bounds_of(input.symbolic_sizes[d], impl_->model.symbols));
  return bounds;
}
const std::vector<Symbol>& Program::symbols() const { return impl_->model.symbols; }
std::size_t Program::state_count() const { return impl_->state_tensors.size(); }
std::size_t Program::planned_memory_bytes() const { return impl_->planned_bytes; }
const std::string& Program::metadata_json() const { return impl_->model.metadata_json; }

// The state's construction throws inside the library only: a failure
// becomes the Result's status here.
Result<RunState> Program::make_state() const {
  try {
    return RunState(std::make_unique<RunState::Impl>(*impl_));
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::NoMemory,
                  fmt::format("{}: cannot allocate a run state ({} bytes of activations)", impl_->path,
                              impl_->planned_bytes));
  } catch (const std::runtime_error& e) {  // a prepared kernel's instantiate failed
    return Status(StatusCode::KernelFailed, e.what());
  }
}

namespace {

RunResult other_program(const std::string& path, bool moved_from) {
  return Status(StatusCode::Invalid, path + (moved_from ? ": the run state was moved from"
                                                        : ": the run state was made by another program"));
}

// Calls visit(value index) for each tensor argument of an instruction, the
// elements of tensor lists in place.
template <typename Visit>
void for_each_tensor_argument(const Program::Impl& program, std::size_t instruction, Visit visit) {
  for (uint32_t v : program.model.instructions[instruction].args) {
    const runtime::ValueModel& value = program.model.values[v];
    if (value.kind == runtime::ValueKind::Tensor) visit(v);
    for (uint32_t element : value.elements)
      if (element != runtime::kNoTensor) visit(element);
  }
}

}  // namespace

RunResult Program::run(RunState& state) const {
  if (!state.impl_ || state.impl_->program != impl_.get()) return other_program(impl_->path, !state.impl_);
  return state.impl_->execute(nullptr);
}

RunResult Program::run(RunState& state, std::vector<InstructionTiming>& timings) const {
  if (!state.impl_ || state.impl_->program != impl_.get()) return other_program(impl_->path, !state.impl_);
  return state.impl_->execute(&timings);
}

std::vector<InstructionInfo> Program::describe_instructions() const {
  std::unordered_map<const void*, std::string> component_of;
  for (const RecordInfo& record : registered_records()) component_of.emplace(record.function, record.origin.component);
  std::vector<InstructionInfo> infos;
  infos.reserve(impl_->instructions.size());
  for (std::size_t i = 0; i < impl_->instructions.size(); ++i) {
    const Impl::Instruction& instruction = impl_->instructions[i];
    InstructionInfo info;
    info.op = impl_->model.instructions[i].op;
    const auto found = component_of.find(reinterpret_cast<const void*>(instruction.fn));
    if (found != component_of.end()) info.component = found->second;
    info.prepared = instruction.prepared != nullptr;
    for_each_tensor_argument(*impl_, i,
                             [&](uint32_t v) { info.tensors.push_back(impl_->model.values[v].tensor.spec); });
    infos.push_back(std::move(info));
  }
  return infos;
}

std::vector<std::vector<int64_t>> Program::instruction_sizes(const RunState& state, std::size_t instruction) const {
  std::vector<std::vector<int64_t>> sizes;
  if (!state.impl_ || state.impl_->program != impl_.get() || instruction >= impl_->instructions.size()) return sizes;
  for_each_tensor_argument(*impl_, instruction, [&](uint32_t v) {
    const int32_t slot = impl_->slot_of_value[v];
    if (slot < 0) {
      sizes.push_back(impl_->model.values[v].tensor.spec.sizes);
    } else {
      const et_ops_tensor& tensor = state.impl_->tensors[static_cast<std::size_t>(slot)];
      sizes.emplace_back(tensor.sizes, tensor.sizes + tensor.dim);
    }
  });
  return sizes;
}

}  // namespace et_ops
