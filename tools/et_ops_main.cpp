// et-ops: run, inspect and diagnose et_ops programs and kernel libraries.
// Dispatches to one command of the command table; exit status 0 success,
// 1 a failure of the program, its inputs or a library, 2 a usage error.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "exit_codes.h"
#include "help.h"

namespace {

using namespace et_ops::tool;

int usage_error(const std::string& message, const std::string& usage) {
  fmt::print(stderr, "et-ops: {}\n\n{}", message, usage);
  return kExitUsage;
}

int run(const Command& command, const std::vector<std::string>& args) {
  if (asks_for_help(args)) {
    fmt::print("{}", command_help(command.spec));
    return kExitOk;
  }
  try {
    return command.run(Arguments(args, command.spec));
  } catch (const UsageError& e) {
    return usage_error(fmt::format("{}: {}", command.spec.name, e.what()),
                       command_usage(command.spec) +
                           fmt::format("'et-ops {} --help' shows every option.\n", command.spec.name));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given", global_usage());
  const std::string& first = args[0];
  if (first == "--help" || first == "-h") {
    fmt::print("{}", global_usage());
    return kExitOk;
  }
  if (first == "help") {  // "et-ops help [COMMAND]"
    if (args.size() == 1) return fmt::print("{}", global_usage()), kExitOk;
    const Command* command = find_command(args[1]);
    if (args.size() > 2) return usage_error("help: expected one command name", global_usage());
    if (command == nullptr) return usage_error(fmt::format("help: unknown command '{}'", args[1]), global_usage());
    return fmt::print("{}", command_help(command->spec)), kExitOk;
  }
  if (first == "--version" || first == "-V") {
    fmt::print("{}", version_text());
    return kExitOk;
  }
  const Command* command = find_command(first);
  if (command == nullptr)
    return usage_error(fmt::format(first.rfind("-", 0) == 0 ? "unknown option '{}'" : "unknown command '{}'", first),
                       global_usage());
  return run(*command, std::vector<std::string>(args.begin() + 1, args.end()));
}
