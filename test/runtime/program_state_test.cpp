// Program state and bounded dynamic shapes (format version 2), and
// generate(), on a small hand-built language model over the project's
// kernels: logits[t] = table[tokens[t]] (an int8 embedding with scale 0.1)
// + bias, where bias is state that grows by `step` every run, and the
// state `last_pos` records the last position of each run (a slice of
// input_pos with symbolic bounds T-1..T).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "et_ops/generate.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/program.h"
#include "etp_writer.h"
#include "temp_dir.h"

namespace {

using et_ops::DType;
using et_ops::test::EtpWriter;

constexpr int64_t kVocab = 8;
constexpr int64_t kMaxSeqLen = 16;

struct Registered {
  Registered() {
    if (!et_ops::kernels::quantized::register_kernels() || !et_ops::kernels::portable::register_kernels())
      throw std::runtime_error("registering the kernel libraries failed");
  }
} registered;

std::vector<int8_t> table_values() {
  std::vector<int8_t> table(kVocab * kVocab);
  uint32_t x = 12345;
  for (int8_t& v : table) {
    x = x * 1103515245u + 12345u;
    v = static_cast<int8_t>(static_cast<int>((x >> 16) % 200) - 100);
  }
  return table;
}

std::vector<float> step_values() {
  std::vector<float> step(kVocab);
  for (int64_t j = 0; j < kVocab; ++j) step[j] = 0.75f * static_cast<float>(j % 3);
  return step;
}

EtpWriter language_model() {
  EtpWriter w("bigram");
  w.symbol("T", 1, kMaxSeqLen);
  const uint32_t tokens = w.dynamic_tensor(DType::Int64, nlohmann::json::array({1, EtpWriter::sym("T")}));
  const uint32_t positions = w.dynamic_tensor(DType::Int64, nlohmann::json::array({EtpWriter::sym("T")}));
  const uint32_t table = w.constant(DType::Int8, {kVocab, kVocab}, table_values());
  const uint32_t scales = w.constant(DType::Float32, {kVocab}, std::vector<float>(kVocab, 0.1f));
  const uint32_t bias = w.state(DType::Float32, {1, 1, kVocab}, std::vector<float>(kVocab, 0.0f));
  const uint32_t step = w.constant(DType::Float32, {1, 1, kVocab}, step_values());
  const uint32_t last_pos = w.state(DType::Int64, {1}, std::vector<int64_t>{-1});
  const uint32_t embedded = w.dynamic_tensor(DType::Float32, nlohmann::json::array({1, EtpWriter::sym("T"), kVocab}));
  const uint32_t logits = w.dynamic_tensor(DType::Float32, nlohmann::json::array({1, EtpWriter::sym("T"), kVocab}));
  const uint32_t none = w.none(), qmin = w.int_value(-128), qmax = w.int_value(127), one = w.int_value(1),
                 zero = w.int_value(0);
  const uint32_t start = w.symbolic_int(EtpWriter::sym("T", 1, -1)), end = w.symbolic_int(EtpWriter::sym("T"));
  w.inputs({tokens, positions});
  w.outputs({logits, last_pos});
  w.instruction("quantized_decomposed::embedding_byte.out", {table, scales, none, qmin, qmax, tokens, embedded});
  w.instruction("aten::add.out", {bias, step, one, bias});
  w.instruction("aten::add.out", {embedded, bias, one, logits});
  w.instruction("aten::slice_copy.Tensor_out", {positions, zero, start, end, one, last_pos});
  return w;
}

struct Loaded {
  et_ops::test::TempDir dir;
  std::shared_ptr<const et_ops::Program> program;
  explicit Loaded(const EtpWriter& writer) {
    const et_ops::LoadResult result = et_ops::Program::load(writer.write(dir.file("program.etp")));
    INFO(result.status().message());
    REQUIRE(result.ok());
    program = *result;
  }
};

// Fills tokens and positions (first_position..) for a run of tokens.size().
void set_inputs(et_ops::RunState& state, const std::vector<int64_t>& tokens, int64_t first_position) {
  const int64_t count = static_cast<int64_t>(tokens.size());
  REQUIRE(state.resize_input(0, {1, count}).ok());
  REQUIRE(state.resize_input(1, {count}).ok());
  std::memcpy(state.input(0).data(), tokens.data(), tokens.size() * sizeof(int64_t));
  for (int64_t i = 0; i < count; ++i) state.input(1).data_as<int64_t>()[i] = first_position + i;
}

std::vector<float> run_logits(const et_ops::Program& program, et_ops::RunState& state,
                              const std::vector<int64_t>& tokens, int64_t first_position) {
  set_inputs(state, tokens, first_position);
  const et_ops::RunResult result = program.run(state);
  INFO(result.message());
  REQUIRE(result.ok());
  const et_ops::TensorRef logits = state.output(0);
  REQUIRE(logits.size(1) == static_cast<int64_t>(tokens.size()));
  const float* data = logits.data_as<float>();
  return std::vector<float>(data, data + logits.numel());
}

// The model in plain C++: the logits of the last token after `runs` runs.
std::vector<float> reference_logits(int64_t token, int runs) {
  const std::vector<int8_t> table = table_values();
  const std::vector<float> step = step_values();
  std::vector<float> bias(kVocab, 0.0f), logits(kVocab);
  for (int r = 0; r < runs; ++r)
    for (int64_t j = 0; j < kVocab; ++j) bias[j] += step[j];
  for (int64_t j = 0; j < kVocab; ++j) logits[j] = static_cast<float>(table[token * kVocab + j]) * 0.1f + bias[j];
  return logits;
}

std::vector<int64_t> reference_greedy(const std::vector<int64_t>& prompt, std::size_t count) {
  std::vector<int64_t> tokens;
  int64_t last = prompt.back();
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<float> logits = reference_logits(last, static_cast<int>(i) + 1);
    last = std::max_element(logits.begin(), logits.end()) - logits.begin();
    tokens.push_back(last);
  }
  return tokens;
}

}  // namespace

TEST_CASE("state is kept from run to run, and reset() restores it") {
  Loaded loaded(language_model());
  const et_ops::Program& program = *loaded.program;
  CHECK(program.state_count() == 2);
  auto state = program.make_state();
  REQUIRE(state.ok());
  const std::vector<float> first = run_logits(program, *state, {3, 5, 1}, 0);
  CHECK(state->output(1).data_as<int64_t>()[0] == 2);
  const std::vector<float> second = run_logits(program, *state, {4}, 3);
  CHECK(state->output(1).data_as<int64_t>()[0] == 3);
  CHECK(first.size() == 3 * kVocab);
  CHECK(second.size() == kVocab);
  CHECK(std::vector<float>(first.end() - kVocab, first.end()) == reference_logits(1, 1));
  CHECK(second == reference_logits(4, 2));

  state->reset();
  CHECK(state->output(1).data_as<int64_t>()[0] == -1);
  CHECK(run_logits(program, *state, {3, 5, 1}, 0) == first);
  CHECK(run_logits(program, *state, {4}, 3) == second);

  SECTION("two run states are independent") {
    auto other = program.make_state();
    REQUIRE(other.ok());
    CHECK(run_logits(program, *other, {3, 5, 1}, 0) == first);
    CHECK(run_logits(program, *state, {4}, 3) != second);  // the third run of `state`
    CHECK(run_logits(program, *other, {4}, 3) == second);
  }
}

TEST_CASE("symbols are bound from the inputs and bounded") {
  Loaded loaded(language_model());
  const et_ops::Program& program = *loaded.program;
  REQUIRE(program.symbols().size() == 1);
  CHECK(program.symbols()[0].name == "T");
  CHECK(program.input_spec(0).sizes == std::vector<int64_t>{1, kMaxSeqLen});
  CHECK(program.input_bounds(0)[1].min == 1);
  CHECK(program.input_bounds(0)[1].max == kMaxSeqLen);
  auto state = program.make_state();
  REQUIRE(state.ok());
  const auto refused_size = [&](std::size_t i, const std::vector<int64_t>& sizes) {
    const et_ops::Status status = state->resize_input(i, sizes);
    CHECK(status.code() == et_ops::StatusCode::Invalid);
    return status.message();
  };
  CHECK(refused_size(0, {1, 0}) == "input 0 dimension 1 is 0: it must be T with T from 1 to 16 (1 to 16)");
  CHECK_THAT(refused_size(0, {1, kMaxSeqLen + 1}), Catch::Contains("input 0 dimension 1 is 17"));
  CHECK(refused_size(0, {2, 3}) == "input 0 dimension 0 is 2: it must be 1");
  CHECK(refused_size(1, {3, 1}) == "input 1 has 1 dimensions, got 2");
  CHECK(refused_size(2, {1}) == "input 2 does not exist: the program has 2 inputs");

  // Inconsistent sizes: refused before any kernel runs, so state is untouched.
  REQUIRE(state->resize_input(0, {1, 3}).ok());
  REQUIRE(state->resize_input(1, {2}).ok());
  const et_ops::RunResult refused = program.run(*state);
  CHECK(refused.code() == et_ops::StatusCode::Invalid);
  CHECK(refused.message() == "input 1 dimension 0 is 2, but input 0 dimension 1 makes T = 3, so it must be 3");
  CHECK(state->output(1).data_as<int64_t>()[0] == -1);
  const std::vector<float> logits = run_logits(program, *state, {6}, 0);
  CHECK(logits == reference_logits(6, 1));
  CHECK(run_logits(program, *state, std::vector<int64_t>(kMaxSeqLen, 2), 0).size() == kMaxSeqLen * kVocab);
}

TEST_CASE("a bad token is a kernel error that writes no state") {
  Loaded loaded(language_model());
  auto state = loaded.program->make_state();
  REQUIRE(state.ok());
  set_inputs(*state, {1, kVocab}, 0);
  const et_ops::RunResult result = loaded.program->run(*state);
  CHECK(result.code() == et_ops::StatusCode::KernelFailed);
  CHECK_THAT(result.message(), Catch::Contains("indices[1] = 8 is out of range for a weight of 8 rows"));
  CHECK(run_logits(*loaded.program, *state, {2}, 0) == reference_logits(2, 1));
}

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

TEST_CASE("version 2 programs are validated at load") {
  et_ops::test::TempDir dir;
  const auto load_error = [&](EtpWriter w) {
    const et_ops::LoadResult result = et_ops::Program::load(w.write(dir.file("bad.etp")));
    CHECK(result.status().code() == et_ops::StatusCode::Format);
    return result.status().message();
  };
  SECTION("state and symbols need version 2") {
    EtpWriter w = language_model();
    w.header()["version"] = 1;
    const std::vector<uint8_t> bytes = et_ops::test::etp_file_bytes(w.header().dump(), w.data(), 1);
    et_ops::test::write_file(dir.file("v1.etp"), bytes);
    CHECK_THAT(et_ops::Program::load(dir.file("v1.etp")).status().message(), Catch::Contains("symbols need format version 2"));
    w.header().erase("symbols");
    et_ops::test::write_file(dir.file("v1.etp"), et_ops::test::etp_file_bytes(w.header().dump(), w.data(), 1));
    CHECK_THAT(et_ops::Program::load(dir.file("v1.etp")).status().message(),
               Catch::Contains("values[0].sizes[1] is symbolic, which needs format version 2 (the file says 1)"));
  }
  SECTION("a symbol no input carries") {
    EtpWriter w = language_model();
    w.symbol("U", 1, 4);
    CHECK_THAT(load_error(w), Catch::Contains("symbols[1] ('U') is in no input's sizes, so no run could bind it"));
  }
  SECTION("an unknown symbol, mul 0, a size that can be negative") {
    EtpWriter w = language_model();
    w.header()["values"][0]["sizes"][1] = EtpWriter::sym("V");
    CHECK_THAT(load_error(w), Catch::Contains("values[0].sizes[1].sym is 'V', not a symbol the header declares"));
    w.header()["values"][0]["sizes"][1] = EtpWriter::sym("T", 0, 1);
    CHECK_THAT(load_error(w), Catch::Contains("values[0].sizes[1].mul is 0"));
    w.header()["values"][0]["sizes"][1] = EtpWriter::sym("T", 1, -2);
    CHECK_THAT(load_error(w), Catch::Contains("values[0].sizes[1]: T-2 is -1 for T = 1; a size must not be negative"));
  }
  SECTION("state without data, symbolic data, state as an input") {
    EtpWriter w = language_model();
    w.header()["values"][0]["state"] = true;
    CHECK_THAT(load_error(w), Catch::Contains("values[0].state is true but the tensor has no data"));
    EtpWriter v = language_model();
    v.header()["values"][2]["sizes"][0] = EtpWriter::sym("T");
    CHECK_THAT(load_error(v), Catch::Contains("values[2]: a tensor with data must have static sizes"));
    EtpWriter u = language_model();
    u.header()["inputs"][1] = 4;
    CHECK_THAT(load_error(u), Catch::Contains("inputs[1] names value 4, a state tensor"));
  }
}

TEST_CASE("inspection shows the version, symbols and state") {
  et_ops::test::TempDir dir;
  const et_ops::Result<et_ops::Program::Inspection> inspected =
      et_ops::Program::inspect(language_model().write(dir.file("lm.etp")));
  INFO(inspected.status().message());
  REQUIRE(inspected.ok());
  const et_ops::Program::Inspection& p = *inspected;
  CHECK(p.version == 2);
  REQUIRE(p.symbols.size() == 1);
  CHECK(p.symbols[0].max == kMaxSeqLen);
  CHECK(p.values[4].state);
  CHECK_FALSE(p.values[4].constant);
  CHECK(p.values[0].symbolic.size() == 2);
  CHECK(p.values[0].symbolic[1].symbol == 0);
  CHECK(p.values[0].tensor.sizes == std::vector<int64_t>{1, kMaxSeqLen});
}
