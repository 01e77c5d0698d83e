// Usage and help texts.
#include "help.h"

#include <fmt/format.h>

#include <algorithm>

#include "commands.h"
#include "et_ops/version.h"

namespace et_ops::tool {
namespace {

constexpr std::size_t kLineWidth = 100;

std::string option_synopsis(const OptionSpec& o) {
  const std::string text = o.is_flag() ? o.name : fmt::format("{} {}", o.name, o.value);
  return fmt::format("[{}]{}", text, o.repeatable ? "..." : "");
}

// Words of `text` filled into lines of kLineWidth, each after `indent`.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t first_column) {
  std::string out;
  std::size_t column = first_column;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (column > indent && column + 1 + word.size() > kLineWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string command_usage(const CommandSpec& spec) {
  const std::string head = fmt::format("usage: et-ops {}", spec.name);
  std::string synopsis = spec.operands;
  for (const OptionSpec& o : spec.options) synopsis += (synopsis.empty() ? "" : " ") + option_synopsis(o);
  return fmt::format("{} {}\n", head, wrapped(synopsis, head.size() + 1, head.size() + 1));
}

std::string command_help(const CommandSpec& spec) {
  std::string text = command_usage(spec) + "\n" + wrapped(spec.summary, 0, 0) + "\n";
  if (!spec.details.empty()) text += "\n" + spec.details;
  std::size_t width = std::string("-h, --help").size();
  for (const OptionSpec& o : spec.options) width = std::max(width, o.name.size() + 1 + o.value.size());
  text += "\noptions:\n";
  for (const OptionSpec& o : spec.options) {
    const std::string name = o.is_flag() ? o.name : o.name + " " + o.value;
    const std::string help = o.help + (o.repeatable ? " (may be repeated)" : "");
    text += fmt::format("  {:<{}}  {}\n", name, width, wrapped(help, width + 4, width + 4));
  }
  text += fmt::format("  {:<{}}  {}\n", "-h, --help", width, "show this help and exit");
  text += "\nExit status: 0 success, 1 a failure of the program, its inputs or a library, 2 a usage error.\n";
  return text;
}

std::string global_usage() {
  std::string text =
      "usage: et-ops COMMAND [ARGS]\n"
      "       et-ops COMMAND --help\n"
      "       et-ops --version\n"
      "\n"
      "Run, inspect and diagnose et_ops programs (.etp) and kernel libraries.\n"
      "\n"
      "commands:\n";
  std::size_t width = 0;
  for (const Command& c : commands()) width = std::max(width, c.spec.name.size());
  for (const Command& c : commands())
    text += fmt::format("  {:<{}}  {}\n", c.spec.name, width, wrapped(c.spec.summary, width + 4, width + 4));
  text +=
      "\n"
      "'et-ops COMMAND --help' shows a command's operands and options.\n"
      "Exit status: 0 success, 1 a failure of the program, its inputs or a library, 2 a usage error.\n";
  return text;
}

std::string version_text() { return fmt::format("et-ops {}\n", ET_OPS_VERSION); }

}  // namespace et_ops::tool
