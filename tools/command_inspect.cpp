// et-ops inspect PROGRAM.etp [--json]
// What a program contains, read without resolving its operators: name,
// inputs and outputs, constants, instructions with their arguments, and
// the activation memory one run state plans.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "et_ops/program.h"
#include "et_ops/value.h"
#include "exit_codes.h"

namespace et_ops::tool {
namespace {

using Value = Program::Inspection::Value;

std::string dims_text(const std::vector<int64_t>& sizes) { return fmt::format("[{}]", fmt::join(sizes, ", ")); }
std::string dims_text(const std::vector<uint8_t>& order) { return fmt::format("[{}]", fmt::join(order, ", ")); }

bool contiguous(const TensorSpec& spec) {
  for (std::size_t d = 0; d < spec.dim_order.size(); ++d)
    if (spec.dim_order[d] != d) return false;
  return true;
}

std::string dtype_text(int64_t raw) {
  return is_valid_dtype(static_cast<int32_t>(raw)) ? std::string(dtype_name(static_cast<DType>(raw))) : "invalid";
}

std::string tensor_text(const TensorSpec& spec, bool always_dim_order) {
  std::string text = fmt::format("{} {}", dtype_name(spec.dtype), dims_text(spec.sizes));
  if (always_dim_order || !contiguous(spec)) text += fmt::format(" dim_order {}", dims_text(spec.dim_order));
  return text;
}

// "input 0", "output 1", "constant", or "" for an intermediate.
std::string role_text(const Program::Inspection& p, uint32_t v) {
  std::vector<std::string> roles;
  for (std::size_t i = 0; i < p.inputs.size(); ++i)
    if (p.inputs[i] == v) roles.push_back(fmt::format("input {}", i));
  for (std::size_t i = 0; i < p.outputs.size(); ++i)
    if (p.outputs[i] == v) roles.push_back(fmt::format("output {}", i));
  if (p.values[v].constant) roles.push_back("constant");
  return fmt::format("{}", fmt::join(roles, ", "));
}

std::string value_text(const Program::Inspection& p, uint32_t v) {
  const Value& value = p.values[v];
  switch (value.tag) {
    case ET_OPS_VALUE_TENSOR: {
      const std::string role = role_text(p, v);
      return fmt::format("%{} {}{}", v, tensor_text(value.tensor, false), role.empty() ? "" : " (" + role + ")");
    }
    case ET_OPS_VALUE_INT: return fmt::format("%{} int {}", v, value.integer);
    case ET_OPS_VALUE_DOUBLE: return fmt::format("%{} double {}", v, value.real);
    case ET_OPS_VALUE_BOOL: return fmt::format("%{} bool {}", v, value.integer != 0);
    case ET_OPS_VALUE_SCALAR_TYPE: return fmt::format("%{} scalar_type {}", v, dtype_text(value.integer));
    case ET_OPS_VALUE_INT_LIST: return fmt::format("%{} int_list {}", v, dims_text(value.list));
    case ET_OPS_VALUE_TENSOR_LIST: {
      std::vector<std::string> names;
      for (int64_t element : value.list) names.push_back(fmt::format("%{}", element));
      return fmt::format("%{} tensor_list [{}]", v, fmt::join(names, ", "));
    }
    default: return fmt::format("%{} none", v);
  }
}

struct ConstantSummary {
  std::size_t count = 0;
  std::size_t bytes = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_dtype;  // dtype -> (count, bytes)
};

ConstantSummary summarize_constants(const Program::Inspection& p) {
  ConstantSummary summary;
  for (const Value& value : p.values) {
    if (value.tag != ET_OPS_VALUE_TENSOR || !value.constant) continue;
    const std::size_t bytes = value.tensor.nbytes();
    ++summary.count;
    summary.bytes += bytes;
    auto& [count, dtype_bytes] = summary.by_dtype[std::string(dtype_name(value.tensor.dtype))];
    ++count;
    dtype_bytes += bytes;
  }
  return summary;
}

void print_io(const Program::Inspection& p, const char* title, const std::vector<uint32_t>& indices) {
  fmt::print("{} ({}):\n", title, indices.size());
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const Value& value = p.values[indices[i]];
    fmt::print("  {}  {}\n", i,
               value.tag == ET_OPS_VALUE_TENSOR ? fmt::format("%{} {}", indices[i], tensor_text(value.tensor, true))
                                                : value_text(p, indices[i]));
  }
}

void print_text(const std::string& path, const Program::Inspection& p) {
  fmt::print("program {}{}\n", path, p.name.empty() ? "" : fmt::format(" ('{}')", p.name));
  print_io(p, "inputs", p.inputs);
  print_io(p, "outputs", p.outputs);
  const ConstantSummary constants = summarize_constants(p);
  std::vector<std::string> dtypes;
  for (const auto& [dtype, totals] : constants.by_dtype)
    dtypes.push_back(fmt::format("{}: {} ({} bytes)", dtype, totals.first, totals.second));
  fmt::print("constants: {} tensor(s), {} bytes{}\n", constants.count, constants.bytes,
             dtypes.empty() ? "" : fmt::format("; {}", fmt::join(dtypes, ", ")));
  for (uint32_t v = 0; v < p.values.size(); ++v)
    if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].constant)
      fmt::print("  %{}  {}, {} bytes\n", v, tensor_text(p.values[v].tensor, false), p.values[v].tensor.nbytes());
  fmt::print("instructions ({}, {} operator(s)):\n", p.instructions.size(), p.operators.size());
  for (std::size_t i = 0; i < p.instructions.size(); ++i) {
    std::vector<std::string> args;
    for (uint32_t a : p.instructions[i].args) args.push_back(value_text(p, a));
    fmt::print("  {}  {}({})\n", i, p.instructions[i].op, fmt::join(args, ", "));
  }
  fmt::print("planned memory: {} bytes per run state (inputs, intermediates and outputs; constants stay in the "
             "file)\n",
             p.planned_memory_bytes);
  if (p.metadata_json != "{}") fmt::print("metadata: {}\n", p.metadata_json);
}

nlohmann::json tensor_json(const TensorSpec& spec) {
  return {{"dtype", dtype_name(spec.dtype)}, {"shape", spec.sizes}, {"dim_order", spec.dim_order}};
}

nlohmann::json value_json(const Program::Inspection& p, uint32_t v) {
  const Value& value = p.values[v];
  nlohmann::json j = {{"value_index", v}, {"type", value_tag_name(value.tag)}};
  switch (value.tag) {
    case ET_OPS_VALUE_TENSOR:
      j.update(tensor_json(value.tensor));
      j["constant"] = value.constant;
      if (value.constant) j["nbytes"] = value.tensor.nbytes();
      break;
    case ET_OPS_VALUE_INT: j["value"] = value.integer; break;
    case ET_OPS_VALUE_DOUBLE: j["value"] = value.real; break;
    case ET_OPS_VALUE_BOOL: j["value"] = value.integer != 0; break;
    case ET_OPS_VALUE_SCALAR_TYPE: j["value"] = dtype_text(value.integer); break;
    case ET_OPS_VALUE_INT_LIST:
    case ET_OPS_VALUE_TENSOR_LIST: j["value"] = value.list; break;
    default: break;
  }
  return j;
}

nlohmann::json to_json(const std::string& path, const Program::Inspection& p) {
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array(),
                 tensors = nlohmann::json::array(), instructions = nlohmann::json::array(),
                 dtypes = nlohmann::json::object();
  for (uint32_t v : p.inputs) inputs.push_back(value_json(p, v));
  for (uint32_t v : p.outputs) outputs.push_back(value_json(p, v));
  for (uint32_t v = 0; v < p.values.size(); ++v)
    if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].constant) tensors.push_back(value_json(p, v));
  const ConstantSummary constants = summarize_constants(p);
  for (const auto& [dtype, totals] : constants.by_dtype)
    dtypes[dtype] = {{"count", totals.first}, {"bytes", totals.second}};
  for (std::size_t i = 0; i < p.instructions.size(); ++i) {
    nlohmann::json args = nlohmann::json::array();
    for (uint32_t a : p.instructions[i].args) args.push_back(value_json(p, a));
    instructions.push_back({{"index", i}, {"op", p.instructions[i].op}, {"args", args}});
  }
  return {{"path", path},
          {"name", p.name},
          {"inputs", inputs},
          {"outputs", outputs},
          {"constants", {{"count", constants.count}, {"bytes", constants.bytes}, {"dtypes", dtypes},
                         {"tensors", tensors}}},
          {"operators", p.operators},
          {"instructions", instructions},
          {"value_count", p.values.size()},
          {"planned_memory_bytes", p.planned_memory_bytes},
          {"metadata", nlohmann::json::parse(p.metadata_json, nullptr, false)}};
}

}  // namespace

CommandSpec inspect_spec() {
  CommandSpec spec;
  spec.name = "inspect";
  spec.operands = "PROGRAM.etp";
  spec.summary = "what a program contains: inputs, outputs, constants, instructions and planned memory";
  spec.details =
      "Reads and validates the file as a load does, without resolving operators, so it works when\n"
      "kernels are missing. Values are written %N (their index in the file).\n";
  spec.min_positional = spec.max_positional = 1;
  spec.operand_completion = Completion::files("*.etp");
  spec.options = {{"--json", "", "print JSON instead of text", false, {}}};
  return spec;
}

int inspect_command(const Arguments& args) {
  const std::string& path = args.positional()[0];
  const Result<Program::Inspection> inspected = Program::inspect(path);
  if (!inspected) {
    fmt::print(stderr, "et-ops: {}\n", inspected.status().message());
    return kExitFailure;
  }
  const Program::Inspection& inspection = *inspected;
  if (args.flag("--json")) fmt::print("{}\n", to_json(path, inspection).dump(2));
  else print_text(path, inspection);
  return kExitOk;
}

}  // namespace et_ops::tool
