// et-ops inspect PROGRAM.etp [--json]
// What a program contains, read without resolving its operators: name,
// inputs and outputs, symbols, constants, state, instructions with their
// arguments, and the activation memory one run state plans.
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

// "[1, 16]", or "[1, T]" for symbolic sizes (the same for an int_list).
std::string entries_text(const Program::Inspection& p, const std::vector<int64_t>& values,
                         const std::vector<SymbolicInt>& symbolic) {
  if (symbolic.empty()) return dims_text(values);
  std::vector<std::string> entries;
  for (const SymbolicInt& e : symbolic) entries.push_back(symbolic_text(e, p.symbols));
  return fmt::format("[{}]", fmt::join(entries, ", "));
}

std::string tensor_text(const Program::Inspection& p, const Value& value, bool always_dim_order) {
  const TensorSpec& spec = value.tensor;
  std::string text = fmt::format("{} {}", dtype_name(spec.dtype), entries_text(p, spec.sizes, value.symbolic));
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
  if (p.values[v].state) roles.push_back("state");
  return fmt::format("{}", fmt::join(roles, ", "));
}

std::string value_text(const Program::Inspection& p, uint32_t v) {
  const Value& value = p.values[v];
  switch (value.tag) {
    case ET_OPS_VALUE_TENSOR: {
      const std::string role = role_text(p, v);
      return fmt::format("%{} {}{}", v, tensor_text(p, value, false), role.empty() ? "" : " (" + role + ")");
    }
    case ET_OPS_VALUE_INT:
      return fmt::format("%{} int {}", v, value.symbolic.empty() ? fmt::format("{}", value.integer)
                                                                 : symbolic_text(value.symbolic[0], p.symbols));
    case ET_OPS_VALUE_DOUBLE: return fmt::format("%{} double {}", v, value.real);
    case ET_OPS_VALUE_BOOL: return fmt::format("%{} bool {}", v, value.integer != 0);
    case ET_OPS_VALUE_SCALAR_TYPE: return fmt::format("%{} scalar_type {}", v, dtype_text(value.integer));
    case ET_OPS_VALUE_INT_LIST: return fmt::format("%{} int_list {}", v, entries_text(p, value.list, value.symbolic));
    case ET_OPS_VALUE_TENSOR_LIST:
    case ET_OPS_VALUE_OPTIONAL_TENSOR_LIST: {
      std::vector<std::string> names;
      for (int64_t element : value.list) names.push_back(element < 0 ? "none" : fmt::format("%{}", element));
      return fmt::format("%{} {} [{}]", v, value_tag_name(value.tag), fmt::join(names, ", "));
    }
    case ET_OPS_VALUE_STRING: return fmt::format("%{} string {:?}", v, value.text);
    default: return fmt::format("%{} none", v);
  }
}

// Constants (read-only) or state tensors (copied into each run state).
struct ConstantSummary {
  std::size_t count = 0;
  std::size_t bytes = 0;
  std::map<std::string, std::pair<std::size_t, std::size_t>> by_dtype;  // dtype -> (count, bytes)
};

ConstantSummary summarize_constants(const Program::Inspection& p, bool state = false) {
  ConstantSummary summary;
  for (const Value& value : p.values) {
    if (value.tag != ET_OPS_VALUE_TENSOR || !(state ? value.state : value.constant)) continue;
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
               value.tag == ET_OPS_VALUE_TENSOR ? fmt::format("%{} {}", indices[i], tensor_text(p, value, true))
                                                : value_text(p, indices[i]));
  }
}

void print_text(const std::string& path, const Program::Inspection& p) {
  fmt::print("program {}{}\n", path, p.name.empty() ? "" : fmt::format(" ('{}')", p.name));
  print_io(p, "inputs", p.inputs);
  print_io(p, "outputs", p.outputs);
  if (!p.symbols.empty()) {
    std::vector<std::string> symbols;
    for (const Symbol& s : p.symbols) symbols.push_back(fmt::format("{} in [{}, {}]", s.name, s.min, s.max));
    fmt::print("symbols: {} (memory is planned for the largest sizes)\n", fmt::join(symbols, ", "));
  }
  const ConstantSummary constants = summarize_constants(p);
  std::vector<std::string> dtypes;
  for (const auto& [dtype, totals] : constants.by_dtype)
    dtypes.push_back(fmt::format("{}: {} ({} bytes)", dtype, totals.first, totals.second));
  fmt::print("constants: {} tensor(s), {} bytes{}\n", constants.count, constants.bytes,
             dtypes.empty() ? "" : fmt::format("; {}", fmt::join(dtypes, ", ")));
  for (uint32_t v = 0; v < p.values.size(); ++v)
    if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].constant)
      fmt::print("  %{}  {}, {} bytes\n", v, tensor_text(p, p.values[v], false), p.values[v].tensor.nbytes());
  const ConstantSummary state = summarize_constants(p, true);
  if (state.count > 0) {
    fmt::print("state: {} tensor(s), {} bytes, in each run state (initial bytes in the file)\n", state.count,
               state.bytes);
    for (uint32_t v = 0; v < p.values.size(); ++v)
      if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].state)
        fmt::print("  %{}  {}, {} bytes\n", v, tensor_text(p, p.values[v], false), p.values[v].tensor.nbytes());
  }
  fmt::print("instructions ({}, {} operator(s)):\n", p.instructions.size(), p.operators.size());
  for (std::size_t i = 0; i < p.instructions.size(); ++i) {
    std::vector<std::string> args;
    for (uint32_t a : p.instructions[i].args) args.push_back(value_text(p, a));
    fmt::print("  {}  {}({})\n", i, p.instructions[i].op, fmt::join(args, ", "));
  }
  fmt::print("planned memory: {} bytes per run state (inputs, intermediates, state and outputs; constants stay in "
             "the file), of which at most {} are live at once\n",
             p.planned_memory_bytes, p.peak_live_bytes);
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
      if (value.state) j["state"] = true;
      if (value.state) j["nbytes"] = value.tensor.nbytes();
      if (value.constant) j["nbytes"] = value.tensor.nbytes();
      break;
    case ET_OPS_VALUE_INT: j["value"] = value.integer; break;  // symbolic: the largest value (below)
    case ET_OPS_VALUE_DOUBLE: j["value"] = value.real; break;
    case ET_OPS_VALUE_BOOL: j["value"] = value.integer != 0; break;
    case ET_OPS_VALUE_SCALAR_TYPE: j["value"] = dtype_text(value.integer); break;
    case ET_OPS_VALUE_INT_LIST:
    case ET_OPS_VALUE_TENSOR_LIST: j["value"] = value.list; break;
    case ET_OPS_VALUE_OPTIONAL_TENSOR_LIST:
      j["value"] = nlohmann::json::array();
      for (int64_t element : value.list) j["value"].push_back(element < 0 ? nlohmann::json() : nlohmann::json(element));
      break;
    case ET_OPS_VALUE_STRING: j["value"] = value.text; break;
    default: break;
  }
  if (!value.symbolic.empty()) {
    std::vector<std::string> entries;
    for (const SymbolicInt& e : value.symbolic) entries.push_back(symbolic_text(e, p.symbols));
    j["symbolic"] = entries;
  }
  return j;
}

nlohmann::json to_json(const std::string& path, const Program::Inspection& p) {
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array(),
                 tensors = nlohmann::json::array(), instructions = nlohmann::json::array(),
                 dtypes = nlohmann::json::object();
  for (uint32_t v : p.inputs) inputs.push_back(value_json(p, v));
  for (uint32_t v : p.outputs) outputs.push_back(value_json(p, v));
  nlohmann::json state = nlohmann::json::array(), symbols = nlohmann::json::array();
  for (uint32_t v = 0; v < p.values.size(); ++v) {
    if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].constant) tensors.push_back(value_json(p, v));
    if (p.values[v].tag == ET_OPS_VALUE_TENSOR && p.values[v].state) state.push_back(value_json(p, v));
  }
  for (const Symbol& s : p.symbols) symbols.push_back({{"name", s.name}, {"min", s.min}, {"max", s.max}});
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
          {"version", p.version},
          {"symbols", symbols},
          {"state", state},
          {"inputs", inputs},
          {"outputs", outputs},
          {"constants", {{"count", constants.count}, {"bytes", constants.bytes}, {"dtypes", dtypes},
                         {"tensors", tensors}}},
          {"operators", p.operators},
          {"instructions", instructions},
          {"value_count", p.values.size()},
          {"planned_memory_bytes", p.planned_memory_bytes},
          {"peak_live_bytes", p.peak_live_bytes},
          {"metadata", nlohmann::json::parse(p.metadata_json, nullptr, false)}};
}

}  // namespace

CommandSpec inspect_spec() {
  return command_spec("inspect",
      "what a program contains: inputs, outputs, symbols, constants, state, instructions and planned memory",
      "Reads and validates the file as a load does, without resolving operators, so it works when\n"
      "kernels are missing. Values are written %N (their index in the file).\n",
      Operands::program(), {{"--json", "", "print JSON instead of text", false, {}}});
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
