// et-ops run PROGRAM.etp [--input FILE.npy]... [--output-dir DIR]
//   [--kernels LIST] [--policy P] [--repeat N] [--threads N] [--profile FILE.json]
//   [--load-library PATH]...
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "et_ops/npy.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "exit_codes.h"
#include "kernel_sets.h"
#include "tensor_io.h"

namespace et_ops::tool {
namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Microseconds below a millisecond, so cheap runs do not print as 0.000 ms.
std::string duration_text(double milliseconds) {
  if (milliseconds < 1.0) return fmt::format("{:.1f} us", milliseconds * 1000.0);
  return fmt::format("{:.3f} ms", milliseconds);
}

// A count option (--repeat, --threads): 1 when absent, else 1 to `max`.
int parse_count(const Arguments& args, const std::string& option, long max, const char* what) {
  const std::optional<std::string> text = args.value(option);
  if (!text) return 1;
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || value < 1 || value > max)
    throw UsageError(fmt::format("{}: '{}' is not a {} (1 to {})", option, *text, what, max));
  return static_cast<int>(value);
}

// Runs `repeat` times; prints the timing. With a profiler, every run is
// profiled. False after printing the error.
bool run_timed(const Program& program, RunState& state, int repeat, Profiler* profiler) {
  std::vector<double> times;
  std::vector<InstructionTiming> timings;
  const Clock::time_point first_start = Clock::now();
  for (int i = 0; i < repeat; ++i) {
    const Clock::time_point start = Clock::now();
    const RunResult result = profiler ? program.run(state, timings) : program.run(state);
    times.push_back(milliseconds_since(start));
    if (profiler)
      profiler->add_run(timings, std::chrono::duration<double, std::micro>(start - first_start).count());
    if (!result) {
      fmt::print(stderr, "et-ops: {}: {}\n", program.path(), result.message());
      return false;
    }
  }
  if (repeat == 1) {
    fmt::print("run: {}\n", duration_text(times[0]));
    return true;
  }
  std::sort(times.begin(), times.end());
  const double median = times.size() % 2 ? times[times.size() / 2]
                                         : (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
  fmt::print("run: {} runs, median {}, min {}, max {}\n", repeat, duration_text(median), duration_text(times.front()),
             duration_text(times.back()));
  return true;
}

// Writes the Chrome trace and prints the per-operator summary.
bool write_profile(const Program& program, const Profiler& profiler, const std::string& path) {
  std::ofstream file(path, std::ios::binary);
  file << chrome_trace_json(profiler.records(), program.name());
  file.close();
  if (!file) {
    fmt::print(stderr, "et-ops: {}: cannot write the profile\n", path);
    return false;
  }
  fmt::print("profile: wrote {} ({} events)\n{}", path, profiler.records().size(),
             profile_summary(profiler.records()));
  return true;
}

bool write_outputs(const Program& program, const RunState& state, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    fmt::print(stderr, "et-ops: {}: cannot create the output directory: {}\n", directory, error.message());
    return false;
  }
  for (std::size_t i = 0; i < program.output_count(); ++i) {
    const std::string path = (std::filesystem::path(directory) / fmt::format("output_{}.npy", i)).string();
    if (const Status written = write_npy(path, state.output(i)); !written) {
      fmt::print(stderr, "et-ops: {}\n", written.message());
      return false;
    }
    fmt::print("wrote {} ({})\n", path, describe(state.output(i)));
  }
  return true;
}

void print_outputs(const Program& program, const RunState& state) {
  for (std::size_t i = 0; i < program.output_count(); ++i)
    fmt::print("output {}: {}\n", i, summarize(state.output(i)));
}

}  // namespace

CommandSpec run_spec() {
  CommandSpec spec;
  spec.name = "run";
  spec.operands = "PROGRAM.etp";
  spec.summary = "load and run a program; write DIR/output_<i>.npy, or print a summary of each output";
  spec.details =
      "The program's operators must all be registered when it loads: --kernels and --load-library choose\n"
      "what is registered, so a missing component can be shown on purpose.\n";
  spec.min_positional = spec.max_positional = 1;
  spec.operand_completion = Completion::files("*.etp");
  spec.options = {
      {"--input", "FILE.npy", "the next program input, in input order (dtype and shape must match)", true,
       Completion::files("*.npy")},
      {"--output-dir", "DIR", "write each output to DIR/output_<i>.npy instead of printing a summary", false,
       Completion::directories()},
      {"--repeat", "N", "run N times and print the median, fastest and slowest run", false, {}},
      {"--threads", "N", "the run's thread pool: N threads (default 1; any count gives the same bytes)", false, {}},
      {"--profile", "FILE.json", "write a Chrome trace of every instruction to FILE.json and print a summary per "
       "operator", false, Completion::files("*.json")},
  };
  for (OptionSpec& o : registry_setup_options()) spec.options.push_back(std::move(o));
  return spec;
}

int run_command(const Arguments& args) {
  const RegistrySetup setup = registry_setup_from(args);
  const int repeat = parse_count(args, "--repeat", 1000000000, "positive number of runs");
  const int threads = parse_count(args, "--threads", 1024, "number of threads");
  const std::optional<std::string> profile_path = args.value("--profile");
  const std::optional<std::string> output_dir = args.value("--output-dir");
  if (!apply_registry_setup(setup)) return kExitFailure;

  const Clock::time_point load_start = Clock::now();
  const LoadResult loaded = Program::load(args.positional()[0]);
  if (!loaded) {
    fmt::print(stderr, "et-ops: {}\n", loaded.status().message());
    return kExitFailure;
  }
  fmt::print("load: {}\n", duration_text(milliseconds_since(load_start)));
  const Program& program = **loaded;
  Result<RunState> state = program.make_state();
  if (!state) {
    fmt::print(stderr, "et-ops: {}\n", state.status().message());
    return kExitFailure;
  }
  if (const Status threaded = state->set_threads(static_cast<std::size_t>(threads)); !threaded) {
    fmt::print(stderr, "et-ops: --threads: {}\n", threaded.message());
    return kExitFailure;
  }
  if (const std::string error = fill_inputs(program, *state, args.values("--input")); !error.empty()) {
    fmt::print(stderr, "et-ops: {}\n", error);
    return kExitFailure;
  }
  std::optional<Profiler> profiler;
  if (profile_path) profiler.emplace(program);
  if (!run_timed(program, *state, repeat, profiler ? &*profiler : nullptr)) return kExitFailure;
  if (profiler && !write_profile(program, *profiler, *profile_path)) return kExitFailure;
  if (output_dir) return write_outputs(program, *state, *output_dir) ? kExitOk : kExitFailure;
  print_outputs(program, *state);
  return kExitOk;
}

}  // namespace et_ops::tool
