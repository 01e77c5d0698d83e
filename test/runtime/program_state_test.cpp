// Program state and bounded dynamic shapes (format version 2), on the small
// hand-built language model of language_model_fixture.h.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "et_ops/program.h"
#include "language_model_fixture.h"

namespace {

using namespace et_ops::test;  // the language model fixture

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
