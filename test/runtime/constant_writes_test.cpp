// A program that names a constant (read-only, mapped from the file) where
// a kernel's schema says the kernel writes ("Tensor(a!) out") is refused at
// load, naming the instruction, the argument and the operator, instead of
// faulting when it runs. Constants in read positions load as always.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "et_ops/program.h"
#include "et_ops/registry.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::DType;
using et_ops::StatusCode;
using et_ops::LoadResult;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

void untouched(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

// Two outputs, and a default list whose comma must not count as a separator.
const et_ops_kernel_record kRecords[] = {
    {"et_test_cw::two_out.out", "", &untouched,
     "et_test_cw::two_out.out(Tensor a, int[2] pad=[0, 0], *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), "
     "Tensor(b!))",
     "00000000000000000000000000000002"},
};

struct Registered {
  Registered() {
    et_ops::test::register_test_kernels();
    static const et_ops_manifest manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), "constant_writes_test",
                                          "1.0", kRecords, 1};
    if (!et_ops::register_manifest(manifest)) throw std::runtime_error("registering the test kernel failed");
  }
} registered;

const std::vector<float> kFour = {1, 2, 3, 4};

// two_out(a, pad, out, indices) with the constant at argument `constant_at`
// (0, 2 or 3) and fresh tensors elsewhere.
EtpWriter two_out_program(std::size_t constant_at) {
  EtpWriter w("two_out");
  std::vector<uint32_t> args = {w.tensor(DType::Float32, {4}), w.int_list({0, 0}), w.tensor(DType::Float32, {4}),
                                w.tensor(DType::Int64, {4})};
  args[constant_at] = w.constant(DType::Float32, {4}, kFour);
  w.outputs({args[2]});
  w.instruction("et_test_cw::two_out.out", args);
  return w;
}

LoadResult load(const EtpWriter& w, TempDir& dir) { return et_ops::test::load_bytes(dir, w.bytes()); }

}  // namespace

TEST_CASE("a constant in an out position is a load error naming the instruction and argument") {
  EtpWriter w("scale_into_constant");
  const uint32_t x = w.tensor(DType::Float32, {4});
  const uint32_t constant = w.constant(DType::Float32, {4}, kFour);
  w.inputs({x});
  w.outputs({constant});
  w.instruction("et_test_rt::scale.out", {x, w.double_value(2.0), constant});
  TempDir dir;
  const LoadResult result = load(w, dir);
  INFO(result.status().message());
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == et_ops::StatusCode::Format);
  CHECK(result.status().message() == dir.file("program.etp") +
                            ": instructions[0].args[2] names value 1, a constant, where et_test_rt::scale.out writes "
                            "its argument 2; constants are read-only");
}

TEST_CASE("every written argument of a schema is checked, and only those") {
  TempDir dir;
  SECTION("a constant read by the kernel loads") {
    const LoadResult result = load(two_out_program(0), dir);
    INFO(result.status().message());
    CHECK(result.ok());
  }
  SECTION("a constant as the first output is refused") {
    const LoadResult result = load(two_out_program(2), dir);
    CHECK_THAT(result.status().message(), Catch::Contains("instructions[0].args[2]") && Catch::Contains("et_test_cw::two_out.out"));
  }
  SECTION("a constant as the second output is refused") {
    const LoadResult result = load(two_out_program(3), dir);
    CHECK_THAT(result.status().message(), Catch::Contains("instructions[0].args[3]") && Catch::Contains("constants are read-only"));
  }
}

TEST_CASE("a schema without annotations is not checked: the write still faults at run time") {
  // et_test_rt::poke.out(Tensor a) -> () declares no write; program_run_test
  // shows that its write to a constant faults.
  EtpWriter w("poke");
  const uint32_t constant = w.constant(DType::Float32, {4}, kFour);
  w.outputs({constant});
  w.instruction("et_test_rt::poke.out", {constant});
  TempDir dir;
  const LoadResult result = load(w, dir);
  INFO(result.status().message());
  CHECK(result.ok());
}
