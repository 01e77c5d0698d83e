// et-ops run PROGRAM.etp [--input FILE.npy]... [--batch] [--output-dir DIR]
//   [--kernels LIST] [--policy P] [--repeat N] [--threads N] [--profile FILE.json]
//   [--load-library PATH]...
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "commands.h"
#include "et_ops/npy.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "exit_codes.h"
#include "kernel_sets.h"
#include "profile_output.h"
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

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

// "run: 5 runs, median ..." or, for a batch, the time per input.
void print_timing(std::vector<double> times, const InputFiles& inputs, bool batched, int repeat) {
  std::sort(times.begin(), times.end());
  const std::string spread = fmt::format("min {}, max {}", duration_text(times.front()), duration_text(times.back()));
  if (batched)
    fmt::print("run: {} inputs{}: median {} per input, {}\n", inputs.count,
               repeat > 1 ? fmt::format(", {} passes", repeat) : "", duration_text(median_of_sorted(times)), spread);
  else if (repeat == 1)
    fmt::print("run: {}\n", duration_text(times[0]));
  else
    fmt::print("run: {} runs, median {}, {}\n", repeat, duration_text(median_of_sorted(times)), spread);
}

// Runs every input `repeat` times (the inputs in order, `repeat` passes);
// prints the timing. With a profiler, every run is profiled; with a stack,
// the first pass's outputs go into it. False after printing the error.
bool run_timed(const Program& program, RunState& state, const InputFiles& inputs, bool batched, int repeat,
               Profiler* profiler, OutputStack* stack) {
  std::vector<double> times;
  std::vector<InstructionTiming> timings;
  const Clock::time_point first_start = Clock::now();
  for (int pass = 0; pass < repeat; ++pass) {
    for (int64_t item = 0; item < inputs.count; ++item) {
      if (batched || pass == 0)
        if (std::string error = fill_inputs(state, inputs, item, batched); !error.empty()) {
          fmt::print(stderr, "et-ops: {}{}\n", batched ? fmt::format("input {}: ", item) : "", error);
          return false;
        }
      const Clock::time_point start = Clock::now();
      const RunResult result = profiler ? program.run(state, timings) : program.run(state);
      times.push_back(milliseconds_since(start));
      if (profiler)
        profiler->add_run(state, timings, std::chrono::duration<double, std::micro>(start - first_start).count());
      std::string error = result.ok() ? std::string() : result.message();
      if (batched && error.empty() && stack && pass == 0) error = stack->add(program, state, item);
      if (!error.empty()) {
        fmt::print(stderr, "et-ops: {}: {}{}\n", program.path(), batched ? fmt::format("input {}: ", item) : "",
                   error);
        return false;
      }
    }
  }
  print_timing(std::move(times), inputs, batched, repeat);
  return true;
}

// The outputs of the run, or their stacks after a batch.
std::vector<TensorRef> outputs_of(const Program& program, const RunState& state, const OutputStack* stack) {
  std::vector<TensorRef> outputs;
  for (std::size_t i = 0; i < program.output_count(); ++i)
    outputs.push_back(stack ? stack->output(i) : state.output(i));
  return outputs;
}

bool write_outputs(const std::vector<TensorRef>& outputs, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) {
    fmt::print(stderr, "et-ops: {}: cannot create the output directory: {}\n", directory, error.message());
    return false;
  }
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = (std::filesystem::path(directory) / fmt::format("output_{}.npy", i)).string();
    if (const Status written = write_npy(path, outputs[i]); !written) {
      fmt::print(stderr, "et-ops: {}\n", written.message());
      return false;
    }
    fmt::print("wrote {} ({})\n", path, describe(outputs[i]));
  }
  return true;
}

void print_outputs(const std::vector<TensorRef>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) fmt::print("output {}: {}\n", i, summarize(outputs[i]));
}

}  // namespace

CommandSpec run_spec() {
  return command_spec("run", "load and run a program; write DIR/output_<i>.npy, or print a summary of each output",
      "The program's operators must all be registered when it loads: --kernels and --load-library choose\n"
      "what is registered, so a missing component can be shown on purpose.\n"
      "\n"
      "With --batch, every --input file holds N inputs along a new first dimension (a program input of\n"
      "shape [1, 1, 8, 8] takes a file of shape [N, 1, 1, 8, 8], every file the same N). The program runs\n"
      "once per input, in order, on one run state; output i is the stack of its N values, shape [N, ...],\n"
      "and the timing is per input.\n"
      "\n"
      "A program with bounded dynamic shapes (et-ops inspect shows [1, T] and T's bounds) takes inputs of\n"
      "any sizes within the bounds; its outputs have the sizes of the run.\n",
      Operands::program(), with_registry_setup({
          {"--input", "FILE.npy", "the next program input, in input order (dtype and shape must match; a dynamic "
           "dimension takes any size within its bounds)", true,
           Completion::files("*.npy")},
          {"--batch", "", "each --input file holds a batch: inputs stacked along a new first dimension ([N, ...]); "
           "run once per input and stack each output the same way", false, {}},
          {"--output-dir", "DIR", "write each output to DIR/output_<i>.npy instead of printing a summary", false,
           Completion::directories()},
          {"--repeat", "N", "run N times (a batch: N passes) and print the median, fastest and slowest run", false, {}},
          {"--threads", "N", "the run's thread pool: N threads (default 1; any count gives the same bytes)", false, {}},
          profile_option("write a Chrome trace of every instruction to FILE.json and print a summary per operator")}));
}

int run_command(const Arguments& args) {
  const RegistrySetup setup = registry_setup_from(args);
  const int repeat = static_cast<int>(parse_count(args, "--repeat", 1000000000, "positive number of runs"));
  const int threads = static_cast<int>(parse_count(args, "--threads", 1024, "number of threads"));
  const std::optional<std::string> profile_path = args.value("--profile");
  const std::optional<std::string> output_dir = args.value("--output-dir");
  const bool batched = args.flag("--batch");
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
  InputFiles inputs;
  std::string error = read_inputs(program, args.values("--input"), batched, &inputs);
  if (error.empty() && batched) error = OutputStack::check(program);
  if (!error.empty()) {
    fmt::print(stderr, "et-ops: {}\n", error);
    return kExitFailure;
  }
  std::optional<OutputStack> stack;
  if (batched) stack.emplace(inputs.count);
  std::optional<Profiler> profiler;
  if (profile_path) profiler.emplace(program);
  if (!run_timed(program, *state, inputs, batched, repeat, profiler ? &*profiler : nullptr, stack ? &*stack : nullptr))
    return kExitFailure;
  if (profiler && !write_profile(program, *profiler, *profile_path)) return kExitFailure;
  const std::vector<TensorRef> outputs = outputs_of(program, *state, stack ? &*stack : nullptr);
  if (output_dir) return write_outputs(outputs, *output_dir) ? kExitOk : kExitFailure;
  print_outputs(outputs);
  return kExitOk;
}

}  // namespace et_ops::tool
