// Programs over libet_kernels_portable.so: mm, add with alpha, relu,
// and a run that allocates nothing.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "allocation_counter.h"
#include "et_ops/kernels/portable.h"
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
    if (!et_ops::kernels::portable::register_kernels()) std::abort();
  }
} registered;

}  // namespace

TEST_CASE("relu(x @ w + b) through a program") {
  EtpWriter w("linear_relu");
  const std::vector<float> weight = {1, -1, 2, 0.5f, 0, 1};  // [3, 2]
  const std::vector<float> bias = {0.5f, -4.0f};             // [1, 2]
  const uint32_t x = w.tensor(DType::Float32, {1, 3});
  const uint32_t wt = w.constant(DType::Float32, {3, 2}, weight);
  const uint32_t b = w.constant(DType::Float32, {1, 2}, bias);
  const uint32_t product = w.tensor(DType::Float32, {1, 2});
  const uint32_t sum = w.tensor(DType::Float32, {1, 2});
  const uint32_t y = w.tensor(DType::Float32, {1, 2});
  w.inputs({x});
  w.outputs({y});
  w.instruction("aten::mm.out", {x, wt, product});
  w.instruction("aten::add.out", {product, b, w.int_value(1), sum});
  w.instruction("aten::relu.out", {sum, y});
  TempDir dir;
  const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  auto state = loaded.value()->make_state();
  const std::vector<float> input = {1, 2, 3};
  REQUIRE(state->set_input(0, input.data(), 12));
  const et_ops::RunResult run = loaded.value()->run(*state);
  INFO(run.message());
  REQUIRE(run.ok());
  // x @ w = [1 + 4 + 0, -1 + 1 + 3] = [5, 3]; + b = [5.5, -1]; relu = [5.5, 0].
  CHECK(et_ops::test::output_floats(*state, 0) == std::vector<float>{5.5f, 0.0f});

  bool ok = true;
  long allocations = -1;
  {
    et_ops::test::AllocationCounter counter;  // no Catch2 assertions inside: they may allocate
    for (int i = 0; i < 5; ++i) ok = loaded.value()->run(*state).ok() && ok;
    allocations = counter.count();
  }
  CHECK(ok);
  CHECK(allocations == 0);  // a run allocates nothing, kernels included
}

namespace {

// relu(x) [8, 16] -> view_copy [128] -> relu, and `reread` adds the first
// relu's result to the view's afterwards (so the view's input outlives it).
EtpWriter view_program(bool reread) {
  EtpWriter w(reread ? "view_reread" : "view");
  const uint32_t x = w.tensor(DType::Float32, {8, 16});
  const uint32_t a = w.tensor(DType::Float32, {8, 16});
  const uint32_t b = w.tensor(DType::Float32, {128});
  const uint32_t y = w.tensor(DType::Float32, {128});
  w.inputs({x});
  w.instruction("aten::relu.out", {x, a});
  w.instruction("aten::view_copy.out", {a, w.int_list({128}), b});
  if (reread) {
    const uint32_t flat = w.tensor(DType::Float32, {128});
    const uint32_t sum = w.tensor(DType::Float32, {128});
    w.instruction("aten::view_copy.out", {a, w.int_list({-1}), flat});
    w.instruction("aten::add.out", {b, flat, w.int_value(1), sum});
    w.instruction("aten::relu.out", {sum, y});
  } else {
    w.instruction("aten::relu.out", {b, y});
  }
  w.outputs({y});
  return w;
}

}  // namespace

TEST_CASE("a view_copy whose input ends there takes its bytes; one whose input lives on copies") {
  std::vector<float> input(128);
  for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<float>(i % 7) - 3.0f;
  for (const bool reread : {false, true}) {
    INFO("the view's input read again afterwards: " << reread);
    TempDir dir;
    const et_ops::LoadResult loaded = et_ops::test::load_bytes(dir, view_program(reread).bytes());
    INFO(loaded.status().message());
    REQUIRE(loaded.ok());
    // Without the reread: x, a (= the view) and y, 512 bytes each. With it,
    // a lives on beside its two views, so nothing is shared with them.
    if (!reread) CHECK(loaded.value()->planned_memory_bytes() == 3 * 512);
    auto state = loaded.value()->make_state();
    REQUIRE(state->set_input(0, input.data(), input.size() * sizeof(float)));
    const et_ops::RunResult run = loaded.value()->run(*state);
    INFO(run.message());
    REQUIRE(run.ok());
    std::vector<float> expected(128);
    for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = std::max(input[i], 0.0f) * (reread ? 2.0f : 1.0f);
    CHECK(et_ops::test::output_floats(*state, 0) == expected);
  }
}
