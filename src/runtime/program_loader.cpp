// Program::load and Program::inspect: the whole file is validated, then
// (load only) every operator is resolved; any failure is one Status.
#include <fmt/format.h>

#include <new>

#include "et_ops/diagnostics.h"
#include "et_ops/registry.h"
#include "registry/fault_injection.h"
#include "runtime/load_errors.h"
#include "runtime/program_impl.h"

namespace et_ops {
namespace {

// Operators that are registered but have neither a kernel matching this
// program's tensor arguments nor a fallback: not a missing component, so
// diagnose_missing_operators does not list them.
std::string unmatched_kernels_text(const std::vector<std::string>& unresolved) {
  std::string text;
  for (const std::string& op : unresolved)
    if (has_operator(op))
      text += fmt::format("  {}  (registered, but no kernel matches this program's tensor dtypes and dim orders, "
                          "and there is no fallback kernel)\n",
                          op);
  return text;
}

Status missing_operators(const std::string& path, const std::vector<std::string>& unresolved) {
  MissingOperatorReport report = diagnose_missing_operators(unresolved, path);
  if (std::string unmatched = unmatched_kernels_text(unresolved); !unmatched.empty())
    report.message += fmt::format("{}: operators without a usable kernel:\n{}", path, unmatched);
  return Status(std::move(report));
}

int32_t value_tag(runtime::ValueKind kind) {
  switch (kind) {
    case runtime::ValueKind::Tensor: return ET_OPS_VALUE_TENSOR;
    case runtime::ValueKind::Int: return ET_OPS_VALUE_INT;
    case runtime::ValueKind::Double: return ET_OPS_VALUE_DOUBLE;
    case runtime::ValueKind::Bool: return ET_OPS_VALUE_BOOL;
    case runtime::ValueKind::ScalarType: return ET_OPS_VALUE_SCALAR_TYPE;
    case runtime::ValueKind::IntList: return ET_OPS_VALUE_INT_LIST;
    case runtime::ValueKind::TensorList: return ET_OPS_VALUE_TENSOR_LIST;
    case runtime::ValueKind::OptionalTensorList: return ET_OPS_VALUE_OPTIONAL_TENSOR_LIST;
    case runtime::ValueKind::String: return ET_OPS_VALUE_STRING;
    case runtime::ValueKind::None: break;
  }
  return ET_OPS_VALUE_NONE;
}

Program::Inspection::Value describe_value(const runtime::ValueModel& model) {
  Program::Inspection::Value value;
  value.tag = value_tag(model.kind);
  value.tensor = model.tensor.spec;
  value.constant = model.tensor.constant;
  value.state = model.tensor.state;
  value.symbolic = model.kind == runtime::ValueKind::Tensor ? model.tensor.symbolic_sizes : model.symbolic;
  value.integer = model.integer;
  value.real = model.real;
  value.text = model.text;
  value.list = model.list;
  if (model.kind == runtime::ValueKind::TensorList || model.kind == runtime::ValueKind::OptionalTensorList) {
    value.list.clear();
    for (uint32_t element : model.elements)
      value.list.push_back(element == runtime::kNoTensor ? int64_t{-1} : static_cast<int64_t>(element));
  }
  return value;
}

void describe_model(const runtime::ProgramModel& model, Program::Inspection& inspection) {
  inspection.name = model.name;
  inspection.version = model.version;
  inspection.symbols = model.symbols;
  inspection.metadata_json = model.metadata_json;
  inspection.inputs = model.inputs;
  inspection.outputs = model.outputs;
  inspection.values.reserve(model.values.size());
  for (const runtime::ValueModel& value : model.values) inspection.values.push_back(describe_value(value));
  inspection.instructions.reserve(model.instructions.size());
  for (const runtime::InstructionModel& instruction : model.instructions)
    inspection.instructions.push_back({instruction.op, instruction.args});
}

}  // namespace

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::~Program() = default;

LoadResult Program::load(const std::string& path, const LoadLimits& limits) {
  try {
    std::unique_ptr<Impl> impl = runtime::build_program(path, limits);
    const std::vector<std::string> unresolved = runtime::resolve_operators(*impl);
    if (!unresolved.empty()) return missing_operators(path, unresolved);
    runtime::prepare_kernels(*impl);
    detail::maybe_fail_load_allocation();
    return std::shared_ptr<const Program>(new Program(std::move(impl)));
  } catch (const runtime::FileError& e) {
    return Status(StatusCode::File, e.what());
  } catch (const runtime::FormatError& e) {
    return Status(StatusCode::Format, e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::Format, fmt::format("{}: out of memory while loading the program", path));
  }
}

Result<Program::Inspection> Program::inspect(const std::string& path, const LoadLimits& limits) {
  try {
    std::unique_ptr<Impl> impl = runtime::build_program(path, limits);
    Inspection inspection;
    describe_model(impl->model, inspection);
    inspection.operators = impl->operators;
    inspection.planned_memory_bytes = impl->planned_bytes;
    inspection.peak_live_bytes = impl->peak_live_bytes;
    return inspection;
  } catch (const runtime::FileError& e) {
    return Status(StatusCode::File, e.what());
  } catch (const std::runtime_error& e) {  // FormatError
    return Status(StatusCode::Format, e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::Format, fmt::format("{}: out of memory while reading the program", path));
  }
}

}  // namespace et_ops
