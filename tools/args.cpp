// Command-line parsing for et-ops.
#include "args.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace et_ops::tool {

CommandSpec command_spec(std::string name, std::string summary, std::string details, Operands operands,
                         std::vector<OptionSpec> options) {
  CommandSpec spec;
  spec.name = std::move(name);
  spec.operands = std::move(operands.synopsis);
  spec.summary = std::move(summary);
  spec.details = std::move(details);
  spec.min_positional = operands.min;
  spec.max_positional = operands.max;
  spec.operand_completion = std::move(operands.completion);
  spec.options = std::move(options);
  return spec;
}

const OptionSpec* CommandSpec::option(const std::string& name) const {
  for (const OptionSpec& o : options)
    if (o.name == name) return &o;
  return nullptr;
}

Arguments::Arguments(const std::vector<std::string>& args, const CommandSpec& spec) {
  bool options_ended = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (options_ended || arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      positional_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    const std::size_t equals = arg.find('=');
    const std::string name = arg.substr(0, equals);
    const OptionSpec* option = spec.option(name);
    if (option == nullptr) throw UsageError(fmt::format("unknown option {}", name));
    if (option->is_flag()) {
      if (equals != std::string::npos) throw UsageError(fmt::format("{} takes no value", name));
      flags_.insert(name);
      continue;
    }
    if (equals == std::string::npos && i + 1 >= args.size())
      throw UsageError(fmt::format("{} needs a value ({})", name, option->value));
    values_[name].push_back(equals != std::string::npos ? arg.substr(equals + 1) : args[++i]);
  }
  if (positional_.size() < spec.min_positional || positional_.size() > spec.max_positional)
    throw UsageError(spec.min_positional == spec.max_positional
                         ? fmt::format("expected {} argument(s), got {}", spec.min_positional, positional_.size())
                         : fmt::format("expected at most {} arguments, got {}", spec.max_positional,
                                       positional_.size()));
}

std::vector<std::string> Arguments::values(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::optional<std::string> Arguments::value(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  if (it->second.size() > 1) throw UsageError(fmt::format("{} may be given only once", name));
  return it->second.front();
}

bool asks_for_help(const std::vector<std::string>& args) {
  const auto end = std::find(args.begin(), args.end(), "--");
  return std::find_if(args.begin(), end, [](const std::string& a) { return a == "-h" || a == "--help"; }) != end;
}

long parse_count(const Arguments& args, const std::string& option, long max, const char* what, long absent,
                 long min) {
  const std::optional<std::string> text = args.value(option);
  if (!text) return absent;
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || value < min || value > max)
    throw UsageError(fmt::format("{}: '{}' is not a {} ({} to {})", option, *text, what, min, max));
  return value;
}

}  // namespace et_ops::tool
