// --profile: the trace file and the summary tables.
#include "profile_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

namespace et_ops::tool {
namespace {

// The records' phases in the order they first appear.
std::vector<std::string> phases_of(const std::vector<ProfileRecord>& records) {
  std::vector<std::string> phases;
  for (const ProfileRecord& r : records)
    if (std::find(phases.begin(), phases.end(), r.phase) == phases.end()) phases.push_back(r.phase);
  return phases;
}

// "decode: 9 runs" and its table.
std::string phase_summary(const std::vector<ProfileRecord>& records, const std::string& phase) {
  std::vector<ProfileRecord> selected;
  std::set<std::size_t> runs;
  for (const ProfileRecord& r : records)
    if (r.phase == phase) {
      selected.push_back(r);
      runs.insert(r.run);
    }
  return fmt::format("{}: {} run{}\n{}", phase, runs.size(), runs.size() == 1 ? "" : "s", profile_summary(selected));
}

}  // namespace

OptionSpec profile_option(std::string help) {
  return {"--profile", "FILE.json", std::move(help), false, Completion::files("*.json")};
}

bool write_profile(const Program& program, const Profiler& profiler, const std::string& path) {
  const std::vector<ProfileRecord>& records = profiler.records();
  std::ofstream file(path, std::ios::binary);
  if (!file.is_open()) {
    fmt::print(stderr, "et-ops: {}: cannot write the profile: {}\n", path, std::strerror(errno));
    return false;
  }
  file << chrome_trace_json(records, program.name());
  file.close();
  if (!file) {
    fmt::print(stderr, "et-ops: {}: cannot write the profile\n", path);
    return false;
  }
  fmt::print("profile: wrote {} ({} events)\n", path, records.size());
  const std::vector<std::string> phases = phases_of(records);
  if (phases.size() <= 1 && (phases.empty() || phases[0].empty())) {
    fmt::print("{}", profile_summary(records));
    return true;
  }
  for (const std::string& phase : phases) fmt::print("{}", phase_summary(records, phase));
  return true;
}

}  // namespace et_ops::tool
