// et-ops run PROGRAM.etp [--input FILE.npy]... [--output-dir DIR]
//   [--kernels LIST] [--policy P] [--repeat N] [--load-library PATH]...
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "commands.h"
#include "et_ops/npy.h"
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

int parse_repeat(const Arguments& args) {
  const std::optional<std::string> text = args.value("--repeat");
  if (!text) return 1;
  std::size_t used = 0;
  long value = 0;
  try {
    value = std::stol(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || value < 1 || value > 1000000000)
    throw UsageError(fmt::format("--repeat: '{}' is not a positive number of runs", *text));
  return static_cast<int>(value);
}

// Runs `repeat` times; prints the timing. False after printing the error.
bool run_timed(const Program& program, RunState& state, int repeat) {
  std::vector<double> times;
  for (int i = 0; i < repeat; ++i) {
    const Clock::time_point start = Clock::now();
    const RunResult result = program.run(state);
    times.push_back(milliseconds_since(start));
    if (!result.ok) {
      fmt::print(stderr, "et-ops: {}: {}\n", program.path(), result.error);
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

bool write_outputs(const Program& program, const RunState& state, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    fmt::print(stderr, "et-ops: {}: cannot create the output directory: {}\n", directory, error.message());
    return false;
  }
  for (std::size_t i = 0; i < program.output_count(); ++i) {
    const std::string path = (std::filesystem::path(directory) / fmt::format("output_{}.npy", i)).string();
    std::string message;
    if (!write_npy(path, state.output(i), &message)) {
      fmt::print(stderr, "et-ops: {}\n", message);
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
  };
  for (OptionSpec& o : registry_setup_options()) spec.options.push_back(std::move(o));
  return spec;
}

int run_command(const Arguments& args) {
  const RegistrySetup setup = registry_setup_from(args);
  const int repeat = parse_repeat(args);
  const std::optional<std::string> output_dir = args.value("--output-dir");
  if (!apply_registry_setup(setup)) return kExitFailure;

  const Clock::time_point load_start = Clock::now();
  const LoadResult loaded = Program::load(args.positional()[0]);
  if (!loaded.ok()) {
    fmt::print(stderr, "et-ops: {}\n", loaded.error);
    return kExitFailure;
  }
  fmt::print("load: {}\n", duration_text(milliseconds_since(load_start)));
  const Program& program = *loaded.program;
  const std::unique_ptr<RunState> state = program.make_state();
  if (std::string error = fill_inputs(program, *state, args.values("--input")); !error.empty()) {
    fmt::print(stderr, "et-ops: {}\n", error);
    return kExitFailure;
  }
  if (!run_timed(program, *state, repeat)) return kExitFailure;
  if (output_dir) return write_outputs(program, *state, *output_dir) ? kExitOk : kExitFailure;
  print_outputs(program, *state);
  return kExitOk;
}

}  // namespace et_ops::tool
