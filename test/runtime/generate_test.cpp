// generate() and the token sampler (src/runtime/generate.cpp,
// token_sampler.cpp), on the small hand-built language model of
// language_model_fixture.h: greedy tokens against its reference,
// reproducible sampling, refused input, and profiled generation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "et_ops/generate.h"
#include "et_ops/profile.h"
#include "et_ops/program.h"
#include "language_model_fixture.h"

namespace {

using namespace et_ops::test;  // the language model fixture

constexpr std::size_t kInstructions = 4;  // of the fixture's program

double end_us(const et_ops::ProfileRecord& r) { return r.start_us + r.duration_us; }

}  // namespace

TEST_CASE("generate: greedy tokens, reproducible sampling, threads") {
  Loaded loaded(language_model());
  const et_ops::Program& program = *loaded.program;
  const et_ops::Result<et_ops::LanguageModelShape> shape = et_ops::language_model_shape(program);
  INFO(shape.status().message());
  REQUIRE(shape.ok());
  CHECK(shape->vocab_size == kVocab);
  CHECK(shape->max_seq_len == kMaxSeqLen);
  auto state = program.make_state();
  REQUIRE(state.ok());
  et_ops::GenerateOptions options;
  options.max_new_tokens = 10;
  const std::vector<int64_t> prompt = {3, 5, 1};
  // The tokens of a generation that must succeed.
  const auto tokens_of = [&]() {
    const et_ops::Result<et_ops::Generation> generated = et_ops::generate(program, *state, prompt, options);
    INFO(generated.status().message());
    REQUIRE(generated.ok());
    return generated->tokens;
  };
  const et_ops::Result<et_ops::Generation> greedy_result = et_ops::generate(program, *state, prompt, options);
  INFO(greedy_result.status().message());
  REQUIRE(greedy_result.ok());
  const et_ops::Generation& greedy = *greedy_result;
  CHECK(greedy.tokens == reference_greedy(prompt, 10));
  CHECK(greedy.timings.prefill_tokens == 3);
  CHECK(greedy.timings.decode_tokens == 9);
  CHECK(tokens_of() == greedy.tokens);  // generate resets

  REQUIRE(state->set_threads(2).ok());
  CHECK(tokens_of() == greedy.tokens);

  SECTION("stop tokens end generation after the stop token") {
    options.stop_tokens = {greedy.tokens[4]};
    const auto first_stop = std::find(greedy.tokens.begin(), greedy.tokens.end(), greedy.tokens[4]);
    CHECK(tokens_of() == std::vector<int64_t>(greedy.tokens.begin(), first_stop + 1));
  }
  SECTION("sampling: the same seed gives the same tokens, top-k 1 is greedy") {
    options.temperature = 0.8;
    options.top_k = 3;
    options.seed = 42;
    const std::vector<int64_t> sampled = tokens_of();
    CHECK(tokens_of() == sampled);
    REQUIRE(state->set_threads(1).ok());
    CHECK(tokens_of() == sampled);
    // Each sampled token is among the 3 best of its step's logits.
    int64_t last = prompt.back();
    for (std::size_t i = 0; i < sampled.size(); ++i) {
      std::vector<float> logits = reference_logits(last, static_cast<int>(i) + 1);
      std::vector<float> sorted = logits;
      std::sort(sorted.begin(), sorted.end(), std::greater<float>());
      CHECK(logits[static_cast<std::size_t>(sampled[i])] >= sorted[2]);
      last = sampled[i];
    }
    options.top_k = 1;
    CHECK(tokens_of() == greedy.tokens);
  }
}

TEST_CASE("generate refuses bad input, naming the input and the bound; the state stays usable") {
  Loaded loaded(language_model());
  const et_ops::Program& program = *loaded.program;
  auto state = program.make_state();
  REQUIRE(state.ok());
  et_ops::GenerateOptions options;
  options.max_new_tokens = 4;
  const auto refused = [&](const std::vector<int64_t>& prompt) {
    const et_ops::Result<et_ops::Generation> result = et_ops::generate(program, *state, prompt, options);
    CHECK(result.status().code() == et_ops::StatusCode::Invalid);
    return result.status().message();
  };
  CHECK(refused({1, kVocab}) == "prompt_tokens[1] is 8, outside the vocabulary: token ids are 0 to 7");
  CHECK(refused({-1}) == "prompt_tokens[0] is -1, outside the vocabulary: token ids are 0 to 7");
  CHECK(refused({}) == "prompt_tokens is empty: the prompt needs at least one token");
  CHECK(refused(std::vector<int64_t>(kMaxSeqLen + 1, 1)) ==
        "prompt_tokens has 17 tokens, more than the program's max_seq_len of 16");
  CHECK(refused(std::vector<int64_t>(kMaxSeqLen - 3, 1)) ==
        "a prompt of 13 tokens plus max_new_tokens 4 runs past the program's max_seq_len of 16 (at most 3 new "
        "tokens fit)");
  options.temperature = -1.0;
  CHECK_THAT(refused({1}), Catch::Contains("temperature is -1"));
  options.temperature = 0.0;
  options.max_new_tokens = kMaxSeqLen - 2;
  const et_ops::Result<et_ops::Generation> full = et_ops::generate(program, *state, {3, 5}, options);
  REQUIRE(full.ok());
  CHECK(full->tokens == reference_greedy({3, 5}, kMaxSeqLen - 2));
}

TEST_CASE("the token sampler") {
  const std::vector<float> logits = {0.5f, 2.0f, 2.0f, -1.0f};
  et_ops::TokenSampler greedy(0.0, 0, 0);
  CHECK(*greedy.next(logits.data(), logits.size()) == 1);  // the lower id among equal logits
  et_ops::TokenSampler a(1.0, 0, 7), b(1.0, 0, 7);
  std::vector<int64_t> counts(4, 0);
  for (int i = 0; i < 4000; ++i) {
    const int64_t token = *a.next(logits.data(), logits.size());
    CHECK(token == *b.next(logits.data(), logits.size()));
    ++counts[static_cast<std::size_t>(token)];
  }
  // Probabilities e^0.5, e^2, e^2, e^-1 over their sum: 0.094, 0.422, 0.422, 0.021.
  CHECK(counts[0] > 300);
  CHECK(counts[0] < 460);
  CHECK(counts[1] > 1550);
  CHECK(counts[2] > 1550);
  CHECK(counts[3] < 130);
  et_ops::TokenSampler top2(1.0, 2, 7);
  for (int i = 0; i < 200; ++i) {
    const int64_t token = *top2.next(logits.data(), logits.size());
    CHECK((token == 1 || token == 2));
  }
  const float nan[] = {0.0f, std::numeric_limits<float>::quiet_NaN()};
  const et_ops::Result<int64_t> refused = greedy.next(nan, 2);
  CHECK(refused.status().code() == et_ops::StatusCode::Invalid);
  CHECK(refused.status().message() == "logits[1] is NaN");
}

TEST_CASE("generate with a profiler: every instruction of every run, labelled prefill or decode") {
  Loaded loaded(language_model());
  const et_ops::Program& program = *loaded.program;
  auto state = program.make_state();
  REQUIRE(state.ok());
  et_ops::Profiler profiler(program);
  et_ops::GenerateOptions options;
  options.max_new_tokens = 5;
  options.profiler = &profiler;
  const std::vector<int64_t> prompt = {3, 5, 1};
  const et_ops::Result<et_ops::Generation> profiled = et_ops::generate(program, *state, prompt, options);
  INFO(profiled.status().message());
  REQUIRE(profiled.ok());
  CHECK(profiled->tokens == reference_greedy(prompt, 5));

  // One prefill run and 4 decode runs (the first new token comes from the prefill).
  const std::vector<et_ops::ProfileRecord>& records = profiler.records();
  REQUIRE(records.size() == 5 * kInstructions);
  for (std::size_t i = 0; i < records.size(); ++i) {
    INFO("record " << i);
    CHECK(records[i].run == i / kInstructions);
    CHECK(records[i].instruction == i % kInstructions);
    CHECK(records[i].phase == (i < kInstructions ? "prefill" : "decode"));
    CHECK(records[i].duration_us >= 0.0);
    if (i > 0) CHECK(records[i].start_us >= end_us(records[i - 1]) - 1e-3);
  }
  CHECK(records[0].op == "quantized_decomposed::embedding_byte.out");
  CHECK(records[0].component == "kernels_quantized");
  // Each run's own sizes: the embedding's tokens and output for T = 3, then T = 1.
  REQUIRE(records[0].tensors.size() == 4);
  CHECK(records[0].tensors[2].sizes == std::vector<int64_t>{1, 3});
  CHECK(records[0].tensors[3].sizes == std::vector<int64_t>{1, 3, kVocab});
  CHECK(records[kInstructions].tensors[3].sizes == std::vector<int64_t>{1, 1, kVocab});
  CHECK(records[0].tensors[0].sizes == std::vector<int64_t>{kVocab, kVocab});
  CHECK(program.instruction_sizes(*state, kInstructions).empty());

  const nlohmann::json trace = nlohmann::json::parse(et_ops::chrome_trace_json(records, program.name()));
  std::vector<std::string> phases;
  for (const nlohmann::json& event : trace["traceEvents"])
    if (event["ph"] == "X") phases.push_back(event["args"]["phase"].get<std::string>());
  CHECK(static_cast<std::size_t>(std::count(phases.begin(), phases.end(), "prefill")) == kInstructions);
  CHECK(static_cast<std::size_t>(std::count(phases.begin(), phases.end(), "decode")) == 4 * kInstructions);
  CHECK(et_ops::profile_summary(records).find("aten::add.out") != std::string::npos);

  options.profiler = nullptr;
  const et_ops::Result<et_ops::Generation> plain = et_ops::generate(program, *state, prompt, options);
  REQUIRE(plain.ok());
  CHECK(plain->tokens == profiled->tokens);

  SECTION("a second generation's runs follow the first's") {
    options.profiler = &profiler;
    options.max_new_tokens = 2;
    REQUIRE(et_ops::generate(program, *state, prompt, options).ok());
    REQUIRE(records.size() == 7 * kInstructions);
    CHECK(records[5 * kInstructions].run == 5);
    CHECK(records[5 * kInstructions].phase == "prefill");
    CHECK(records[5 * kInstructions].start_us >= end_us(records[5 * kInstructions - 1]));
    CHECK(records.back().phase == "decode");
  }
  SECTION("a profiler made for another program is refused before anything runs") {
    Loaded other(language_model());
    et_ops::Profiler foreign(*other.program);
    options.profiler = &foreign;
    const et_ops::Result<et_ops::Generation> refused = et_ops::generate(program, *state, prompt, options);
    CHECK(refused.status().code() == et_ops::StatusCode::Invalid);
    CHECK(refused.status().message() == "the profiler was made for another program");
    CHECK(foreign.records().empty());
    CHECK(other.program->instruction_sizes(*state, 0).empty());  // a run state of another program
  }
}
