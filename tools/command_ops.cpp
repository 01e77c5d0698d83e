// et-ops ops [--json] [--kernels LIST] [--policy P] [--load-library PATH]...
// Every registered operator with its key, component, library and fingerprint.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "commands.h"
#include "et_ops/registry.h"
#include "exit_codes.h"
#include "kernel_sets.h"

namespace et_ops::tool {
namespace {

std::string key_text(const RecordInfo& record) { return record.key.empty() ? "fallback" : record.key; }

nlohmann::json record_json(const RecordInfo& record) {
  return {{"op", record.op},
          {"key", key_text(record)},
          {"component", record.origin.component},
          {"version", record.origin.version},
          {"library", record.origin.library_path},
          {"fingerprint", record.fingerprint},
          {"schema", record.schema},
          {"active", record.active}};
}

void print_json(const std::vector<RecordInfo>& records) {
  nlohmann::json operators = nlohmann::json::array();
  for (const RecordInfo& record : records) operators.push_back(record_json(record));
  const Counters c = counters();
  const nlohmann::json document = {
      {"operators", operators},
      {"counters", {{"registered", c.registered}, {"deduplicated", c.deduplicated}, {"conflicts", c.conflicts},
                    {"unregistered", c.unregistered}}}};
  fmt::print("{}\n", document.dump(2));
}

void print_table(const std::vector<RecordInfo>& records) {
  std::size_t width = 8;
  for (const RecordInfo& record : records) width = std::max(width, record.op.size());
  fmt::print("{:<{}}  {:<10}  {:<18}  {:<32}  {}\n", "operator", width, "key", "component", "fingerprint", "library");
  for (const RecordInfo& record : records)
    fmt::print("{:<{}}  {:<10}  {:<18}  {:<32}  {}{}\n", record.op, width, key_text(record), record.origin.component,
               record.fingerprint, record.origin.library_path, record.active ? "" : "  (deduplicated copy)");
  fmt::print("{} record(s)\n", records.size());
}

}  // namespace

CommandSpec ops_spec() {
  return command_spec("ops", "every registered operator: key, component, library, fingerprint", "", {},
      with_registry_setup({{"--json", "", "print JSON: the records and the registry's counters", false, {}}}));
}

int ops_command(const Arguments& args) {
  const RegistrySetup setup = registry_setup_from(args);
  if (!apply_registry_setup(setup)) return kExitFailure;
  const std::vector<RecordInfo> records = registered_records();
  if (args.flag("--json")) print_json(records);
  else print_table(records);
  return kExitOk;
}

}  // namespace et_ops::tool
