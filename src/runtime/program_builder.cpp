// Turning a validated model into the immutable parts of a Program: tensor
// prototypes, value templates, flattened instruction arguments and the
// input/output specs.
#include <fmt/format.h>

#include <unordered_set>

#include "et_ops/value.h"
#include "runtime/etp_header.h"
#include "runtime/etp_preamble.h"
#include "registry/fault_injection.h"
#include "runtime/load_errors.h"
#include "runtime/memory_plan.h"
#include "runtime/program_impl.h"

namespace et_ops::runtime {
namespace {

// Where zero-byte constants point when the data segment is empty: kernels
// never see a null data pointer.
alignas(kDataAlignment) const uint8_t kNoBytes[kDataAlignment] = {};

et_ops_tensor prototype_of(const TensorModel& tensor, const uint8_t* data_segment) {
  et_ops_tensor t{};
  t.sizes = tensor.spec.sizes.data();
  t.strides = tensor.strides.data();
  t.dim_order = tensor.spec.dim_order.data();
  t.numel = tensor.spec.numel();
  t.dtype = static_cast<int32_t>(tensor.spec.dtype);
  t.dim = static_cast<int32_t>(tensor.spec.sizes.size());
  if (tensor.constant)  // mapped read-only: a kernel that writes a constant faults
    t.data = const_cast<uint8_t*>(data_segment != nullptr ? data_segment + tensor.data_offset : kNoBytes);
  return t;
}

et_ops_value template_of(const ValueModel& value) {
  switch (value.kind) {
    case ValueKind::Tensor: return tensor_value(static_cast<et_ops_tensor*>(nullptr));
    case ValueKind::Int: return int_value(value.integer);
    case ValueKind::Double: return double_value(value.real);
    case ValueKind::Bool: return bool_value(value.integer != 0);
    case ValueKind::ScalarType: return scalar_type_value(static_cast<DType>(value.integer));
    case ValueKind::IntList:
      return int_list_value(value.list.data(), static_cast<int64_t>(value.list.size()));
    case ValueKind::TensorList:  // each run state points it at its own tensors
      return tensor_list_value(nullptr, static_cast<int64_t>(value.elements.size()));
    case ValueKind::OptionalTensorList:
      return optional_tensor_list_value(nullptr, static_cast<int64_t>(value.elements.size()));
    case ValueKind::String: return string_value(value.text);
    case ValueKind::None: break;
  }
  return none_value();
}

void build_values(Program::Impl& program, const uint8_t* data_segment, const MemoryPlan& plan) {
  const auto& values = program.model.values;
  program.value_templates.reserve(values.size());
  program.slot_of_value.assign(values.size(), -1);
  for (uint32_t v = 0; v < values.size(); ++v) {
    detail::maybe_fail_load_allocation();
    program.value_templates.push_back(template_of(values[v]));
    if (values[v].kind != ValueKind::Tensor) continue;
    program.slot_of_value[v] = static_cast<int32_t>(program.tensor_slots.size());
    const TensorModel& tensor = values[v].tensor;
    const std::size_t slot = program.tensor_slots.size();
    program.tensor_slots.push_back(
        Program::Impl::TensorSlot{v, prototype_of(tensor, data_segment), plan.offsets[v], tensor.constant});
    if (tensor.state)
      program.state_tensors.push_back(
          {slot, data_segment != nullptr ? data_segment + tensor.data_offset : kNoBytes, tensor.spec.nbytes()});
    if (!tensor.symbolic_sizes.empty()) program.dynamic_tensors.push_back({slot, v});
  }
}

// What a run needs to bind and evaluate the symbols (version 2).
void build_symbolic_parts(Program::Impl& program) {
  const auto& model = program.model;
  for (uint32_t v = 0; v < model.values.size(); ++v)
    if (model.values[v].kind != ValueKind::Tensor && !model.values[v].symbolic.empty())
      program.dynamic_values.push_back(v);
  for (std::size_t i = 0; i < model.inputs.size(); ++i) {
    const std::vector<SymbolicInt>& sizes = model.values[model.inputs[i]].tensor.symbolic_sizes;
    for (std::size_t d = 0; d < sizes.size(); ++d)
      if (sizes[d].symbol >= 0) program.symbol_sources.push_back({i, d, sizes[d]});
  }
}

void build_instructions(Program::Impl& program) {
  std::unordered_set<std::string> seen;
  program.instructions.reserve(program.model.instructions.size());
  for (const InstructionModel& instruction : program.model.instructions) {
    detail::maybe_fail_load_allocation();
    program.instructions.push_back({nullptr, nullptr, nullptr, program.arg_values.size(), instruction.args.size()});
    program.arg_values.insert(program.arg_values.end(), instruction.args.begin(), instruction.args.end());
    if (seen.insert(instruction.op).second) program.operators.push_back(instruction.op);
  }
}

// A non-tensor output as a tensor over the program's own payload: int,
// scalar_type (its dtype number) and bool as 0-dim, an int_list as 1-dim.
void describe_non_tensor_output(Program::Impl& program, uint32_t v, Program::Impl::ValueAsTensor& out) {
  const ValueModel& value = program.model.values[v];
  et_ops_value& payload = program.value_templates[v];
  out.spec.dtype = value.kind == ValueKind::Double ? DType::Float64
                   : value.kind == ValueKind::Bool ? DType::Bool
                                                   : DType::Int64;
  if (value.kind == ValueKind::IntList) {
    out.spec.sizes = {static_cast<int64_t>(value.list.size())};
    out.spec.dim_order = {0};
    out.strides = {1};
  }
  out.tensor.sizes = out.spec.sizes.data();
  out.tensor.strides = out.strides.data();
  out.tensor.dim_order = out.spec.dim_order.data();
  out.tensor.numel = out.spec.numel();
  out.tensor.dtype = static_cast<int32_t>(out.spec.dtype);
  out.tensor.dim = static_cast<int32_t>(out.spec.sizes.size());
  // A bool payload is an int64 0 or 1, whose first byte is the bool (little-endian).
  void* data = value.kind == ValueKind::Double    ? static_cast<void*>(&payload.u.d)
               : value.kind == ValueKind::IntList ? const_cast<int64_t*>(value.list.data())
                                                  : static_cast<void*>(&payload.u.i);
  out.tensor.data = data != nullptr ? data : const_cast<uint8_t*>(kNoBytes);
}

void build_io_specs(Program::Impl& program) {
  const auto& model = program.model;
  for (uint32_t v : model.inputs) program.input_specs.push_back(model.values[v].tensor.spec);
  program.non_tensor_outputs.resize(model.outputs.size());
  for (std::size_t i = 0; i < model.outputs.size(); ++i) {
    const uint32_t v = model.outputs[i];
    if (model.values[v].kind == ValueKind::Tensor) {
      program.output_specs.push_back(model.values[v].tensor.spec);
    } else {
      describe_non_tensor_output(program, v, program.non_tensor_outputs[i]);
      program.output_specs.push_back(program.non_tensor_outputs[i].spec);
    }
  }
}

}  // namespace

std::unique_ptr<Program::Impl> build_program(const std::string& path, const LoadLimits& limits) {
  auto program = std::make_unique<Program::Impl>();
  program->path = path;
  program->file = MappedFile::open(path);
  try {
    detail::maybe_fail_load_allocation();
    const EtpLayout layout = read_layout(program->file.data(), program->file.size(), limits);
    program->model = parse_header(layout.header, layout.version, layout.data_size, limits);
    detail::maybe_fail_load_allocation();
    const MemoryPlan plan = plan_memory(program->model, limits.max_memory_bytes);
    detail::maybe_fail_load_allocation();
    program->planned_bytes = plan.total_bytes;
    program->peak_live_bytes = plan.peak_live_bytes;
    build_values(*program, layout.data, plan);
    build_symbolic_parts(*program);
    build_instructions(*program);
    detail::maybe_fail_load_allocation();
    build_io_specs(*program);
  } catch (const FormatError& e) {
    throw FormatError(fmt::format("{}: {}", path, e.what()));
  } catch (const Json::exception& e) {
    throw FormatError(fmt::format("{}: the header cannot be read: {}", path, e.what()));
  }
  return program;
}

}  // namespace et_ops::runtime
