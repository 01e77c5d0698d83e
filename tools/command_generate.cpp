// et-ops generate PROGRAM.etp (--prompt-tokens LIST | --tokenizer M.model --prompt TEXT)
//   [--max-new-tokens N] [--temperature T] [--top-k K] [--seed S] [--stop-tokens LIST] [--threads N]
//   [--profile FILE.json] [--kernels LIST] [--policy P] [--load-library PATH]...
// Generates with a language-model program (et_ops/generate.h) and prints the
// new tokens (and the text, through a SentencePiece model), and the prefill
// and decode speeds; with --profile, where the time of each phase goes.
#include <fmt/format.h>

#include <cmath>

#include "commands.h"
#include "et_ops/generate.h"
#include "et_ops/program.h"
#include "exit_codes.h"
#include "kernel_sets.h"
#include "profile_output.h"
#include "tokenizer.h"

namespace et_ops::tool {
namespace {

std::vector<int64_t> parse_token_list(const std::string& option, const std::string& text) {
  std::vector<int64_t> tokens;
  std::size_t start = 0;
  while (start <= text.size() && !text.empty()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(start, end - start);
    std::size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size())
      throw UsageError(fmt::format("{}: '{}' is not a comma-separated list of token ids", option, text));
    tokens.push_back(value);
    start = end + 1;
  }
  return tokens;
}

double parse_temperature(const Arguments& args) {
  const std::optional<std::string> text = args.value("--temperature");
  if (!text) return 0.0;
  std::size_t used = 0;
  double value = -1.0;
  try {
    value = std::stod(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || !(value >= 0.0) || !std::isfinite(value))
    throw UsageError(fmt::format("--temperature: '{}' is not a number of at least 0", *text));
  return value;
}

uint64_t parse_seed(const Arguments& args) {
  const std::optional<std::string> text = args.value("--seed");
  if (!text) return 0;
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    value = std::stoull(*text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text->size() || text->empty() || (*text)[0] == '-')
    throw UsageError(fmt::format("--seed: '{}' is not an unsigned 64-bit integer", *text));
  return value;
}

GenerateOptions options_from(const Arguments& args) {
  GenerateOptions options;
  options.max_new_tokens = static_cast<std::size_t>(parse_count(args, "--max-new-tokens", 1L << 31, "token count", 32, 0));
  options.temperature = parse_temperature(args);
  options.top_k = static_cast<std::size_t>(parse_count(args, "--top-k", 1L << 31, "token count", 0));
  options.seed = parse_seed(args);
  if (const auto stops = args.value("--stop-tokens")) options.stop_tokens = parse_token_list("--stop-tokens", *stops);
  return options;
}

// The prompt's ids, from --prompt-tokens or from --prompt through the tokenizer.
std::vector<int64_t> prompt_from(const Arguments& args, const Tokenizer* tokenizer) {
  const auto tokens = args.value("--prompt-tokens");
  const auto text = args.value("--prompt");
  if (tokens.has_value() == (tokenizer != nullptr))
    throw UsageError("give either --prompt-tokens, or --tokenizer with --prompt");
  if (tokens) {
    if (text) throw UsageError("--prompt needs --tokenizer (or give --prompt-tokens alone)");
    return parse_token_list("--prompt-tokens", *tokens);
  }
  if (!text) throw UsageError("--tokenizer needs --prompt TEXT");
  return tokenizer->encode(*text);
}

std::string speed_text(const char* phase, std::size_t tokens, double seconds, double per_second) {
  return fmt::format("{}: {} tokens in {:.3f} ms, {:.1f} tokens/s\n", phase, tokens, seconds * 1000.0, per_second);
}

void print_result(const std::vector<int64_t>& prompt, const Generation& result, const Tokenizer* tokenizer) {
  fmt::print("prompt tokens: {}\n", fmt::join(prompt, ","));
  fmt::print("new tokens: {}\n", fmt::join(result.tokens, ","));
  if (tokenizer != nullptr) {
    std::vector<int64_t> all = prompt;
    all.insert(all.end(), result.tokens.begin(), result.tokens.end());
    fmt::print("text: {}\n", tokenizer->decode(all));
  }
  const GenerateTimings& t = result.timings;
  if (result.tokens.empty()) {  // --max-new-tokens 0: the prompt needs no run
    fmt::print("prefill: not run (no new tokens were asked for)\ndecode: not run\n");
    return;
  }
  fmt::print("{}", speed_text("prefill", t.prefill_tokens, t.prefill_seconds, t.prefill_tokens_per_second()));
  fmt::print("{}", speed_text("decode", t.decode_tokens, t.decode_seconds, t.decode_tokens_per_second()));
}

}  // namespace

CommandSpec generate_spec() {
  return command_spec("generate",
      "generate tokens with a language-model program; print them (or the text) and the prefill and decode speeds",
      "The program takes tokens int64 [1, T] and input_pos int64 [T] and returns logits float32 [1, T, vocab],\n"
      "with T from 1 to max_seq_len and its cache in state. The prompt runs in one run, then one run per new\n"
      "token. Temperature 0 (the default) is greedy; otherwise tokens are sampled, reproducibly for a seed.\n"
      "With --tokenizer, the prompt is encoded (after the model's beginning-of-sequence id) and its\n"
      "end-of-sequence id stops generation.\n",
      Operands::program(), with_registry_setup({
          {"--prompt-tokens", "LIST", "the prompt as comma-separated token ids", false, {}},
          {"--tokenizer", "M.model", "a SentencePiece model: encode --prompt and print the text", false,
           Completion::files("*.model")},
          {"--prompt", "TEXT", "the prompt as text (needs --tokenizer)", false, {}},
          {"--max-new-tokens", "N", "how many tokens to generate at most (default 32)", false, {}},
          {"--temperature", "T", "0 (default) is greedy; above 0, sample with this temperature", false, {}},
          {"--top-k", "K", "sample among the K most likely tokens only (default: all)", false, {}},
          {"--seed", "S", "the sampling seed (default 0): the same seed gives the same tokens", false, {}},
          {"--stop-tokens", "LIST", "comma-separated token ids that end generation", false, {}},
          {"--threads", "N", "the run's thread pool: N threads (default 1; any count gives the same tokens)", false,
           {}},
          profile_option("write a Chrome trace of every instruction of every run (prefill and decode) to FILE.json "
                         "and print a summary per operator for prefill and for decode")}));
}

int generate_command(const Arguments& args) {
  const RegistrySetup setup = registry_setup_from(args);
  GenerateOptions options = options_from(args);
  const auto threads = static_cast<std::size_t>(parse_count(args, "--threads", 1024, "number of threads"));
  const std::optional<std::string> profile_path = args.value("--profile");
  std::unique_ptr<Tokenizer> tokenizer;
  if (const auto model = args.value("--tokenizer")) {
    std::string error;
    if (!args.value("--prompt")) throw UsageError("--tokenizer needs --prompt TEXT");
    if (tokenizer = load_tokenizer(*model, error); !tokenizer) {
      fmt::print(stderr, "et-ops: {}\n", error);
      return kExitFailure;
    }
    if (tokenizer->eos_id() >= 0) options.stop_tokens.push_back(tokenizer->eos_id());
  }
  const std::vector<int64_t> prompt = prompt_from(args, tokenizer.get());
  if (!apply_registry_setup(setup)) return kExitFailure;
  const LoadResult loaded = Program::load(args.positional()[0]);
  if (!loaded) {
    fmt::print(stderr, "et-ops: {}\n", loaded.status().message());
    return kExitFailure;
  }
  const Program& program = **loaded;
  Result<RunState> state = program.make_state();
  if (!state) {
    fmt::print(stderr, "et-ops: {}\n", state.status().message());
    return kExitFailure;
  }
  if (const Status threaded = state->set_threads(threads); !threaded) {
    fmt::print(stderr, "et-ops: --threads: {}\n", threaded.message());
    return kExitFailure;
  }
  std::optional<Profiler> profiler;
  if (profile_path) options.profiler = &profiler.emplace(program);
  const Result<Generation> result = generate(program, *state, prompt, options);
  if (!result) {
    fmt::print(stderr, "et-ops: {}: {}\n", program.path(), result.status().message());
    return kExitFailure;
  }
  print_result(prompt, *result, tokenizer.get());
  if (profiler && !write_profile(program, *profiler, *profile_path)) return kExitFailure;
  return kExitOk;
}

}  // namespace et_ops::tool
