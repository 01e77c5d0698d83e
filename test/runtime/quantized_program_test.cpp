// Programs over libet_kernels_quantized.so: quantize then dequantize,
// mixed with the test kernels, a kernel error from a quantized kernel, and
// a run that allocates nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>

#include "allocation_counter.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/program.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::DType;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

struct Registered {
  Registered() {
    et_ops::test::register_test_kernels();
    if (!et_ops::kernels::quantized::register_kernels()) std::abort();
  }
} registered;

// x + x (test kernel) -> quantize (scale, zero point 3, int8) -> dequantize.
EtpWriter quantize_round_trip(double scale) {
  EtpWriter w("qdq");
  const uint32_t x = w.tensor(DType::Float32, {8});
  const uint32_t doubled = w.tensor(DType::Float32, {8});
  const uint32_t q = w.tensor(DType::Int8, {8});
  const uint32_t y = w.tensor(DType::Float32, {8});
  const uint32_t s = w.double_value(scale), zp = w.int_value(3), qmin = w.int_value(-128), qmax = w.int_value(127);
  const uint32_t int8 = w.scalar_type(DType::Int8), none = w.none();
  w.inputs({x});
  w.outputs({q, y});
  w.instruction("et_test_rt::add.out", {x, x, doubled});
  w.instruction("quantized_decomposed::quantize_per_tensor.out", {doubled, s, zp, qmin, qmax, int8, q});
  w.instruction("quantized_decomposed::dequantize_per_tensor.out", {q, s, zp, qmin, qmax, int8, none, y});
  return w;
}

}  // namespace

TEST_CASE("quantize and dequantize through a program") {
  TempDir dir;
  const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, quantize_round_trip(0.1).bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  // Doubled: -20, -1.24, -0.08, 0, 0.52, 2, 10.86, 26 -> /0.1 far from .5 boundaries.
  const std::vector<float> x = {-10.0f, -0.62f, -0.04f, 0.0f, 0.26f, 1.0f, 5.43f, 13.0f};
  REQUIRE(state->set_input(0, x.data(), x.size() * sizeof(float)));
  const et_ops::RunResult run = loaded.value()->run(*state);
  INFO(run.message());
  REQUIRE(run.ok());
  const int8_t* q = state->output(0).data_as<int8_t>();
  CHECK(std::vector<int8_t>(q, q + 8) == std::vector<int8_t>{-128, -9, 2, 3, 8, 23, 112, 127});
  const std::vector<float> y = et_ops::test::output_floats(*state, 1);
  for (std::size_t i = 0; i < 8; ++i) CHECK(y[i] == Approx((q[i] - 3) * 0.1).epsilon(1e-6));
}

TEST_CASE("a run of quantized kernels allocates nothing") {
  TempDir dir;
  const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, quantize_round_trip(0.1).bytes());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  bool ok = true;
  long allocations = -1;
  {
    et_ops::test::AllocationCounter counter;  // no Catch2 assertions inside: they may allocate
    for (int i = 0; i < 5; ++i) ok = loaded.value()->run(*state).ok() && ok;
    allocations = counter.count();
  }
  CHECK(ok);
  CHECK(allocations == 0);
}

TEST_CASE("an invalid scale stops the run at the quantize instruction") {
  TempDir dir;
  const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, quantize_round_trip(-1.0).bytes());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  const et_ops::RunResult run = loaded.value()->run(*state);
  CHECK_FALSE(run.ok());
  CHECK_THAT(run.message(), Catch::StartsWith("instruction 1 (quantized_decomposed::quantize_per_tensor.out): "));
  CHECK(run.message().size() > std::string("instruction 1 (quantized_decomposed::quantize_per_tensor.out): ").size());
}

TEST_CASE("the tiny example of docs/program-format.md (examples/tiny/tiny.json) runs as documented") {
  std::ifstream in(TINY_PROGRAM_JSON);
  REQUIRE(in);
  const std::string header((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The data segment the page describes: the scale (float64 0.05) at offset
  // 0, the zero point (int64 3) at offset 64.
  std::vector<uint8_t> data(72, 0);
  const double scale = 0.05;
  const int64_t zero_point = 3;
  std::memcpy(data.data(), &scale, 8);
  std::memcpy(data.data() + 64, &zero_point, 8);
  TempDir dir;
  const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, et_ops::test::etp_file_bytes(header, data));
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  CHECK(loaded.value()->name() == "tiny");
  auto state = loaded.value()->make_state();
  const std::vector<float> x = {-1.0f, 0.0f, 0.26f, 10.0f};
  REQUIRE(state->set_input(0, x.data(), 16));
  const et_ops::RunResult run = loaded.value()->run(*state);
  INFO(run.message());
  REQUIRE(run.ok());
  const int8_t* q = state->output(0).data_as<int8_t>();
  CHECK(std::vector<int8_t>(q, q + 4) == std::vector<int8_t>{-17, 3, 8, 127});
  const std::vector<float> y = et_ops::test::output_floats(*state, 1);
  CHECK(y[0] == Approx(-1.0));
  CHECK(y[2] == Approx(0.25));
  CHECK(y[3] == Approx(6.2));
}
