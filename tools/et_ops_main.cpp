// et-ops: run, inspect and diagnose et_ops programs and kernel libraries.
// Dispatches to one subcommand; exit status 0 success, 1 a failure of the
// program, its inputs or a library, 2 a usage error.
#include <fmt/format.h>

#include <cstring>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"
#include "exit_codes.h"

namespace {

constexpr const char* kUsage =
    "usage: et-ops COMMAND [ARGS]\n"
    "\n"
    "  run PROGRAM.etp [--input FILE.npy]... [--output-dir DIR] [--kernels LIST]\n"
    "                  [--policy fatal|first-wins] [--repeat N] [--load-library PATH]...\n"
    "                  [--threads N] [--profile FILE.json]\n"
    "      load and run a program; write DIR/output_<i>.npy, or print a summary of each output;\n"
    "      --threads: the run's thread pool (default 1); --profile: a Chrome trace of every\n"
    "      instruction and a per-operator summary\n"
    "  ops [--json] [--kernels LIST] [--load-library PATH]...\n"
    "      every registered operator: key, component, library, fingerprint\n"
    "  check [LIBRARY...] [--json]\n"
    "      which kernel library provides which operator, and every collision between them\n"
    "      (default: the kernel libraries shipped next to libet_ops.so)\n"
    "  doctor PROGRAM.etp [--kernels LIST] [--load-library PATH]...\n"
    "      the operators a program needs, which are registered, which are missing and where to get them\n"
    "\n"
    "--kernels portable,quantized chooses the project's kernel sets to register (default: all).\n"
    "Exit status: 0 success, 1 a failure of the program, its inputs or a library, 2 a usage error.\n";

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
};

constexpr Command kCommands[] = {
    {"run", &et_ops::tool::run_command},
    {"ops", &et_ops::tool::ops_command},
    {"check", &et_ops::tool::check_command},
    {"doctor", &et_ops::tool::doctor_command},
};

const Command* find_command(const std::string& name) {
  for (const Command& command : kCommands)
    if (name == command.name) return &command;
  return nullptr;
}

int usage_error(const std::string& message) {
  fmt::print(stderr, "et-ops: {}\n\n{}", message, kUsage);
  return et_ops::tool::kExitUsage;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) return usage_error("no command given");
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    fmt::print("{}", kUsage);
    return et_ops::tool::kExitOk;
  }
  const Command* command = find_command(args[0]);
  if (command == nullptr) return usage_error(fmt::format("unknown command '{}'", args[0]));
  try {
    return command->run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const et_ops::tool::UsageError& e) {
    return usage_error(fmt::format("{}: {}", command->name, e.what()));
  }
}
