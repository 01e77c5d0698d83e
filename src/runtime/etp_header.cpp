// The header's top level: format identification, symbols, values, inputs,
// outputs, instructions, name and metadata. Unknown keys are ignored.
#include "runtime/etp_header.h"

#include <fmt/format.h>

#include <limits>

#include "runtime/etp_preamble.h"
#include "runtime/etp_values.h"
#include "runtime/json_fields.h"
#include "runtime/load_errors.h"
#include "runtime/symbols.h"

namespace et_ops::runtime {
namespace {

// "format" and "version" repeat what the preamble says; when present they
// must agree with it.
void check_identification(const Json& header, uint32_t preamble_version) {
  if (const Json* format = optional_key(header, "format"); format && require_string(*format, "format") != "etp")
    throw FormatError(fmt::format("format is '{}', expected 'etp'", format->get_ref<const std::string&>()));
  if (const Json* version = optional_key(header, "version");
      version && require_int64(*version, "version") != preamble_version)
    throw FormatError(fmt::format("version is {} in the header, but the preamble says {}", version->dump(),
                                  preamble_version));
}

std::vector<Symbol> parse_symbol_table(const Json& header, uint32_t version) {
  if (version < 2 && optional_key(header, "symbols") != nullptr)
    throw FormatError(fmt::format("symbols need format version 2 (the file says {})", version));
  return parse_symbols(header);
}

std::vector<ValueModel> parse_values(const Json& header, const ValueContext& context, const LoadLimits& limits) {
  const Json::array_t& items = require_array(require_key(header, "values", ""), "values");
  const std::size_t limit = std::min<std::size_t>(limits.max_values, std::numeric_limits<uint32_t>::max());
  if (items.size() > limit)
    throw FormatError(fmt::format("values has {} entries, more than the limit of {}", items.size(), limit));
  std::vector<ValueModel> values;
  values.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) values.push_back(parse_value(items[i], item_path("values", i), context));
  return values;
}

std::vector<uint32_t> parse_index_list(const Json& value, std::size_t count, const std::string& path) {
  const Json::array_t& items = require_array(value, path);
  std::vector<uint32_t> indices;
  indices.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) indices.push_back(require_index(items[i], count, item_path(path, i)));
  return indices;
}

// Inputs are filled by the caller: each must be a distinct tensor without data.
void check_inputs(const ProgramModel& model) {
  std::vector<bool> seen(model.values.size(), false);
  for (std::size_t i = 0; i < model.inputs.size(); ++i) {
    const uint32_t v = model.inputs[i];
    const ValueModel& value = model.values[v];
    if (value.kind != ValueKind::Tensor)
      throw FormatError(fmt::format("inputs[{}] names value {}, which is not a tensor", i, v));
    if (value.tensor.constant || value.tensor.state)
      throw FormatError(fmt::format("inputs[{}] names value {}, a {} (a tensor with data)", i, v,
                                    value.tensor.constant ? "constant" : "state tensor"));
    if (seen[v]) throw FormatError(fmt::format("inputs[{}] names value {} a second time", i, v));
    seen[v] = true;
  }
}

// Every symbol is bound from some input's sizes when a run starts.
void check_symbols_bound(const ProgramModel& model) {
  for (std::size_t s = 0; s < model.symbols.size(); ++s) {
    bool carried = false;
    for (uint32_t v : model.inputs)
      for (const SymbolicInt& e : model.values[v].tensor.symbolic_sizes) carried = carried || e.symbol == int32_t(s);
    if (!carried)
      throw FormatError(fmt::format("symbols[{}] ('{}') is in no input's sizes, so no run could bind it", s,
                                    model.symbols[s].name));
  }
}

void check_outputs(const ProgramModel& model) {
  for (std::size_t i = 0; i < model.outputs.size(); ++i) {
    const ValueKind kind = model.values[model.outputs[i]].kind;
    if (kind != ValueKind::Tensor && !model.values[model.outputs[i]].symbolic.empty())
      throw FormatError(fmt::format("outputs[{}] names value {}, a symbolic int; only tensors may be symbolic outputs",
                                    i, model.outputs[i]));
    if (kind == ValueKind::None)
      throw FormatError(fmt::format("outputs[{}] names value {}, which is none", i, model.outputs[i]));
    if (kind == ValueKind::TensorList || kind == ValueKind::OptionalTensorList)
      throw FormatError(fmt::format("outputs[{}] names value {}, {}; name its tensors instead", i,
                                    model.outputs[i],
                                    kind == ValueKind::TensorList ? "a tensor_list" : "an optional_tensor_list"));
    if (kind == ValueKind::String)
      throw FormatError(fmt::format("outputs[{}] names value {}, a string", i, model.outputs[i]));
  }
}

// A tensor list holds tensors: every element is the index of a tensor value
// (or, in an optional_tensor_list, None).
void check_tensor_lists(const ProgramModel& model) {
  for (std::size_t v = 0; v < model.values.size(); ++v) {
    const std::vector<uint32_t>& elements = model.values[v].elements;
    for (std::size_t e = 0; e < elements.size(); ++e) {
      if (elements[e] == kNoTensor) continue;
      const std::string path = fmt::format("values[{}].value[{}]", v, e);
      if (elements[e] >= model.values.size())
        throw FormatError(fmt::format("{} is {}, out of range: the program has {} values", path, elements[e],
                                      model.values.size()));
      if (model.values[elements[e]].kind != ValueKind::Tensor)
        throw FormatError(fmt::format("{} names value {}, which is not a tensor", path, elements[e]));
    }
  }
}

InstructionModel parse_instruction(const Json& item, std::size_t value_count, const std::string& path) {
  require_object(item, path);
  InstructionModel instruction;
  instruction.op = require_string(require_key(item, "op", path), field_path(path, "op"));
  if (instruction.op.empty()) throw FormatError(fmt::format("{}.op is empty", path));
  instruction.args = parse_index_list(require_key(item, "args", path), value_count, field_path(path, "args"));
  return instruction;
}

std::vector<InstructionModel> parse_instructions(const Json& header, std::size_t value_count,
                                                 const LoadLimits& limits) {
  const Json::array_t& items = require_array(require_key(header, "instructions", ""), "instructions");
  if (items.size() > limits.max_instructions)
    throw FormatError(fmt::format("instructions has {} entries, more than the limit of {}", items.size(),
                                  limits.max_instructions));
  std::vector<InstructionModel> instructions;
  instructions.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    instructions.push_back(parse_instruction(items[i], value_count, item_path("instructions", i)));
  return instructions;
}

void parse_descriptive_fields(const Json& header, ProgramModel& model) {
  if (const Json* name = optional_key(header, "name")) model.name = require_string(*name, "name");
  if (const Json* metadata = optional_key(header, "metadata")) {
    require_object(*metadata, "metadata");
    model.metadata_json = metadata->dump();
  }
}

}  // namespace

ProgramModel parse_header(std::string_view header_json, uint32_t version, std::size_t data_segment_size,
                          const LoadLimits& limits) {
  const Json header = parse_json_limited(header_json, limits.max_json_depth);
  require_object(header, "the header");
  check_identification(header, version);
  ProgramModel model;
  model.version = version;
  model.symbols = parse_symbol_table(header, version);
  parse_descriptive_fields(header, model);
  model.values = parse_values(header, ValueContext{data_segment_size, version, &model.symbols}, limits);
  check_tensor_lists(model);
  model.inputs = parse_index_list(require_key(header, "inputs", ""), model.values.size(), "inputs");
  model.outputs = parse_index_list(require_key(header, "outputs", ""), model.values.size(), "outputs");
  check_inputs(model);
  check_symbols_bound(model);
  check_outputs(model);
  model.instructions = parse_instructions(header, model.values.size(), limits);
  return model;
}

}  // namespace et_ops::runtime
