// generate(): the prefill / decode loop over a language-model program, with
// every bad input refused before the first run.
#include "et_ops/generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace et_ops {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string refused_prompt(const std::vector<int64_t>& prompt, const GenerateOptions& options,
                           const LanguageModelShape& shape) {
  if (prompt.empty()) return "prompt_tokens is empty: the prompt needs at least one token";
  if (static_cast<int64_t>(prompt.size()) > shape.max_seq_len)
    return fmt::format("prompt_tokens has {} tokens, more than the program's max_seq_len of {}", prompt.size(),
                       shape.max_seq_len);
  for (std::size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= shape.vocab_size)
      return fmt::format("prompt_tokens[{}] is {}, outside the vocabulary: token ids are 0 to {}", i, prompt[i],
                         shape.vocab_size - 1);
  if (options.max_new_tokens > static_cast<std::size_t>(shape.max_seq_len) - prompt.size())
    return fmt::format("a prompt of {} tokens plus max_new_tokens {} runs past the program's max_seq_len of {} "
                       "(at most {} new tokens fit)",
                       prompt.size(), options.max_new_tokens, shape.max_seq_len,
                       static_cast<std::size_t>(shape.max_seq_len) - prompt.size());
  if (!(options.temperature >= 0.0) || !std::isfinite(options.temperature))
    return fmt::format("temperature is {}; it must be 0 (greedy) or a positive finite number", options.temperature);
  return {};
}

// Runs the program, profiled when there is a profiler: each run's records
// are labelled with its phase and follow the runs the profiler already holds.
class ProfiledRuns {
 public:
  ProfiledRuns(const Program& program, Profiler* profiler)
      : program_(program), profiler_(profiler), origin_us_(profiler ? end_us(*profiler) : 0.0), start_(Clock::now()) {}

  RunResult run(RunState& state, const char* phase) {
    if (profiler_ == nullptr) return program_.run(state);
    const double start_us = origin_us_ + std::chrono::duration<double, std::micro>(Clock::now() - start_).count();
    RunResult result = program_.run(state, timings_);
    profiler_->add_run(state, timings_, start_us, phase);
    return result;
  }

 private:
  static double end_us(const Profiler& profiler) {
    double end = 0.0;
    for (const ProfileRecord& r : profiler.records()) end = std::max(end, r.start_us + r.duration_us);
    return end;
  }

  const Program& program_;
  Profiler* profiler_;
  double origin_us_;
  Clock::time_point start_;
  std::vector<InstructionTiming> timings_;  // reused from run to run
};

// One run over `count` tokens at positions first_position..; the chosen
// next token, or why there is none.
class Runner {
 public:
  Runner(const Program& program, RunState& state, const LanguageModelShape& shape, const GenerateOptions& options)
      : runs_(program, options.profiler),
        state_(state),
        shape_(shape),
        sampler_(options.temperature, options.top_k, options.seed) {}

  Result<int64_t> step(const int64_t* tokens, int64_t count, int64_t first_position, const char* phase) {
    if (Status resized = state_.resize_input(0, {1, count}); !resized) return resized;
    if (Status resized = state_.resize_input(1, {count}); !resized) return resized;
    std::copy(tokens, tokens + count, state_.input(0).data_as<int64_t>());
    int64_t* positions = state_.input(1).data_as<int64_t>();
    for (int64_t i = 0; i < count; ++i) positions[i] = first_position + i;
    if (RunResult run = runs_.run(state_, phase); !run) return run;
    const TensorRef logits = state_.output(0);
    if (!logits.is_contiguous() || logits.dim() != 3 || logits.size(1) != count)
      return Status(StatusCode::Invalid, fmt::format("output 0 (logits) is not a contiguous [1, {}, {}] tensor", count,
                                                     shape_.vocab_size));
    const float* last = logits.data_as<float>() + (count - 1) * shape_.vocab_size;
    Result<int64_t> token = sampler_.next(last, static_cast<std::size_t>(shape_.vocab_size));
    if (!token) return token.status().prefixed(fmt::format("position {}", first_position + count - 1));
    return token;
  }

 private:
  ProfiledRuns runs_;
  RunState& state_;
  LanguageModelShape shape_;
  TokenSampler sampler_;
};

Status not_a_language_model(std::string message) { return Status(StatusCode::Invalid, std::move(message)); }

}  // namespace

Result<LanguageModelShape> language_model_shape(const Program& program) {
  if (program.input_count() != 2 || program.output_count() < 1)
    return not_a_language_model(fmt::format("a language model takes 2 inputs (tokens, input_pos) and returns logits; "
                                            "this program has {} inputs and {} outputs",
                                            program.input_count(), program.output_count()));
  const TensorSpec& tokens = program.input_spec(0);
  const TensorSpec& positions = program.input_spec(1);
  const TensorSpec& logits = program.output_spec(0);
  if (tokens.dtype != DType::Int64 || tokens.sizes.size() != 2 || tokens.sizes[0] != 1)
    return not_a_language_model("input 0 (tokens) must be int64 [1, T]");
  if (positions.dtype != DType::Int64 || positions.sizes.size() != 1)
    return not_a_language_model("input 1 (input_pos) must be int64 [T]");
  if (logits.dtype != DType::Float32 || logits.sizes.size() != 3 || logits.sizes[0] != 1)
    return not_a_language_model("output 0 (logits) must be float32 [1, T, vocab]");
  const SizeBounds t = program.input_bounds(0)[1];
  const SizeBounds p = program.input_bounds(1)[0];
  if (t.min > 1 || p.min != t.min || p.max != t.max)
    return not_a_language_model(fmt::format("input 0 (tokens) dimension 1 and input 1 (input_pos) must both be T, "
                                            "from 1 to max_seq_len; they accept {} to {} and {} to {}",
                                            t.min, t.max, p.min, p.max));
  LanguageModelShape shape;
  shape.vocab_size = logits.sizes[2];
  shape.max_seq_len = t.max;
  return shape;
}

Result<Generation> generate(const Program& program, RunState& state, const std::vector<int64_t>& prompt,
                            const GenerateOptions& options) {
  const Result<LanguageModelShape> shape = language_model_shape(program);
  if (!shape) return shape.status();
  if (std::string refused = refused_prompt(prompt, options, *shape); !refused.empty())
    return Status(StatusCode::Invalid, std::move(refused));
  if (options.profiler != nullptr && !options.profiler->profiles(program))
    return Status(StatusCode::Invalid, "the profiler was made for another program");
  Generation result;
  result.timings.prefill_tokens = prompt.size();
  if (options.max_new_tokens == 0) return result;
  state.reset();
  Runner runner(program, state, *shape, options);
  const auto stops = [&](int64_t token) {
    return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end();
  };
  Clock::time_point start = Clock::now();
  Result<int64_t> token = runner.step(prompt.data(), static_cast<int64_t>(prompt.size()), 0, "prefill");
  result.timings.prefill_seconds = seconds_since(start);
  start = Clock::now();
  while (token) {
    result.tokens.push_back(*token);
    if (result.tokens.size() == options.max_new_tokens || stops(*token)) break;
    const int64_t position = static_cast<int64_t>(prompt.size() + result.tokens.size()) - 1;
    token = runner.step(&result.tokens.back(), 1, position, "decode");
  }
  if (!token) return token.status();
  result.timings.decode_tokens = result.tokens.empty() ? 0 : result.tokens.size() - 1;
  result.timings.decode_seconds = seconds_since(start);
  return result;
}

}  // namespace et_ops
