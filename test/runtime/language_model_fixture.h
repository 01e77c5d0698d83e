// The small hand-built language model of the state and generate tests,
// over the project's kernels: logits[t] = table[tokens[t]] (an int8
// embedding with scale 0.1) + bias, where bias is state that grows by
// `step` every run, and the state `last_pos` records the last position of
// each run (a slice of input_pos with symbolic bounds T-1..T); and its
// reference in plain C++.
#ifndef ET_OPS_TEST_RUNTIME_LANGUAGE_MODEL_FIXTURE_H
#define ET_OPS_TEST_RUNTIME_LANGUAGE_MODEL_FIXTURE_H

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/program.h"
#include "etp_writer.h"
#include "temp_dir.h"

namespace et_ops::test {

inline constexpr int64_t kVocab = 8;
inline constexpr int64_t kMaxSeqLen = 16;

inline std::vector<int8_t> table_values() {
  std::vector<int8_t> table(kVocab * kVocab);
  uint32_t x = 12345;
  for (int8_t& v : table) {
    x = x * 1103515245u + 12345u;
    v = static_cast<int8_t>(static_cast<int>((x >> 16) % 200) - 100);
  }
  return table;
}

inline std::vector<float> step_values() {
  std::vector<float> step(kVocab);
  for (int64_t j = 0; j < kVocab; ++j) step[j] = 0.75f * static_cast<float>(j % 3);
  return step;
}

inline EtpWriter language_model() {
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

// The project's portable and quantized kernels, registered before the tests run.
struct RegisteredKernels {
  RegisteredKernels() {
    if (!kernels::quantized::register_kernels() || !kernels::portable::register_kernels())
      throw std::runtime_error("registering the kernel libraries failed");
  }
};
inline const RegisteredKernels registered_kernels;

// A program written to a temporary directory and loaded.
struct Loaded {
  TempDir dir;
  std::shared_ptr<const Program> program;
  explicit Loaded(const EtpWriter& writer) {
    const LoadResult result = Program::load(writer.write(dir.file("program.etp")));
    INFO(result.status().message());
    REQUIRE(result.ok());
    program = *result;
  }
};

// The model in plain C++: the logits of the last token after `runs` runs.
inline std::vector<float> reference_logits(int64_t token, int runs) {
  const std::vector<int8_t> table = table_values();
  const std::vector<float> step = step_values();
  std::vector<float> bias(kVocab, 0.0f), logits(kVocab);
  for (int r = 0; r < runs; ++r)
    for (int64_t j = 0; j < kVocab; ++j) bias[j] += step[j];
  for (int64_t j = 0; j < kVocab; ++j) logits[j] = static_cast<float>(table[token * kVocab + j]) * 0.1f + bias[j];
  return logits;
}

inline std::vector<int64_t> reference_greedy(const std::vector<int64_t>& prompt, std::size_t count) {
  std::vector<int64_t> tokens;
  int64_t last = prompt.back();
  for (std::size_t i = 0; i < count; ++i) {
    const std::vector<float> logits = reference_logits(last, static_cast<int>(i) + 1);
    last = std::max_element(logits.begin(), logits.end()) - logits.begin();
    tokens.push_back(last);
  }
  return tokens;
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_RUNTIME_LANGUAGE_MODEL_FIXTURE_H
