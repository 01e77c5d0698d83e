// et-ops doctor PROGRAM.etp [--list] [--kernels LIST] [--policy P] [--load-library PATH]...
// The operators a program needs, which are registered (and by whom), which
// are missing, and which component provides each; with --list, only the
// operators, one a line: the file a selective build takes (-Dselected_operators).
#include <fmt/format.h>

#include "commands.h"
#include "et_ops/diagnostics.h"
#include "et_ops/program.h"
#include "et_ops/registry.h"
#include "exit_codes.h"
#include "kernel_sets.h"

namespace et_ops::tool {
namespace {

// "registered (kernels_quantized, /path/libet_kernels_quantized.so)" or "MISSING".
std::string registration_text(const std::string& op, const std::vector<RecordInfo>& records) {
  for (const RecordInfo& record : records)
    if (record.op == op && record.active)
      return fmt::format("registered ({}, {})", record.origin.component, record.origin.library_path);
  return "MISSING";
}

std::string provider_text(const std::string& op) {
  const ComponentInfo* component = component_providing(op);
  if (component == nullptr) return "not provided by any et_ops component";
  return fmt::format("provided by {} ({}, pkg-config {})", component->name, component->library, component->pkg_config);
}

}  // namespace

CommandSpec doctor_spec() {
  std::vector<OptionSpec> options = registry_setup_options();
  options.push_back({"--list", "", "print the operators the program needs, one a line, and nothing else", false, {}});
  return command_spec("doctor",
      "the operators a program needs, which are registered, which are missing and where to get them",
      "Registers the project's kernel sets first, as run does; exits 1 when an operator is missing.\n"
      "With --list, prints only the operators the program needs, one a line, registering nothing: the file\n"
      "a selective build of the kernel libraries takes (meson setup -Dselected_operators=FILE).\n",
      Operands::program(), std::move(options));
}

int doctor_command(const Arguments& args) {
  const std::string& path = args.positional()[0];
  const bool list = args.flag("--list");
  if (!list && !apply_registry_setup(registry_setup_from(args))) return kExitFailure;
  const Result<Program::Inspection> inspected = Program::inspect(path);
  if (!inspected) {
    fmt::print(stderr, "et-ops: {}\n", inspected.status().message());
    return kExitFailure;
  }
  const Program::Inspection& inspection = *inspected;
  if (list) {
    for (const std::string& op : inspection.operators) fmt::print("{}\n", op);
    return kExitOk;
  }
  fmt::print("program {}{} needs {} operator(s):\n", path,
             inspection.name.empty() ? "" : fmt::format(" ('{}')", inspection.name), inspection.operators.size());
  const std::vector<RecordInfo> records = registered_records();
  std::size_t width = 0;
  for (const std::string& op : inspection.operators) width = std::max(width, op.size());
  for (const std::string& op : inspection.operators)
    fmt::print("  {:<{}}  {}; {}\n", op, width, registration_text(op, records), provider_text(op));
  const MissingOperatorReport report = diagnose_missing_operators(inspection.operators, path);
  fmt::print("{} registered, {} missing\n", inspection.operators.size() - report.missing.size(), report.missing.size());
  if (report.ok()) return kExitOk;
  fmt::print("\n{}", report.message);
  return kExitFailure;
}

}  // namespace et_ops::tool
