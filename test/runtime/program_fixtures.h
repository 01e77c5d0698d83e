// Shared helpers of the runtime tests: small valid programs built with
// EtpWriter over the test kernels, and loading from bytes.
#ifndef ET_OPS_TEST_RUNTIME_PROGRAM_FIXTURES_H
#define ET_OPS_TEST_RUNTIME_PROGRAM_FIXTURES_H

#include <string>
#include <vector>

#include "et_ops/program.h"
#include "etp_writer.h"
#include "temp_dir.h"

namespace et_ops::test {

// x (input float32 [2,3]) + c (constant) -> t; t * 2.5 -> y (output).
inline EtpWriter add_scale_program() {
  EtpWriter w("add_scale");
  const std::vector<float> c = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  const uint32_t x = w.tensor(DType::Float32, {2, 3});
  const uint32_t constant = w.constant(DType::Float32, {2, 3}, c);
  const uint32_t t = w.tensor(DType::Float32, {2, 3});
  const uint32_t factor = w.double_value(2.5);
  const uint32_t y = w.tensor(DType::Float32, {2, 3});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_rt::add.out", {x, constant, t});
  w.instruction("et_test_rt::scale.out", {t, factor, y});
  w.header()["metadata"] = {{"source", "unit test"}};
  return w;
}

inline LoadResult load_bytes(const TempDir& dir, const std::vector<uint8_t>& bytes, const LoadLimits& limits = {},
                             const std::string& name = "program.etp") {
  const std::string path = dir.file(name);
  write_file(path, bytes);
  return Program::load(path, limits);
}

inline std::vector<float> output_floats(const RunState& state, std::size_t i) {
  TensorRef out = state.output(i);
  const float* p = out.data_as<float>();
  return std::vector<float>(p, p + out.numel());
}

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_RUNTIME_PROGRAM_FIXTURES_H
