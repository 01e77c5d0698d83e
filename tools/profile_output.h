// The --profile option of run and generate: its row in a command's options,
// and what it writes (a Chrome trace) and prints (the per-operator summary).
#ifndef ET_OPS_TOOLS_PROFILE_OUTPUT_H
#define ET_OPS_TOOLS_PROFILE_OUTPUT_H

#include <string>

#include "args.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"

namespace et_ops::tool {

// "--profile FILE.json", with the command's own help text.
OptionSpec profile_option(std::string help);

// Writes the Chrome trace of the profiler's records to `path` and prints the
// per-operator summary: one table, or one per phase when the runs have
// phases ("prefill", "decode"). False after printing the error.
bool write_profile(const Program& program, const Profiler& profiler, const std::string& path);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_PROFILE_OUTPUT_H
