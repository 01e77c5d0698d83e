// Load limits (et_ops::LoadLimits) at their boundaries: a program exactly
// at a limit loads, one unit beyond is a Format error naming the file and
// the limit, both for Program::load and Program::inspect, and the defaults
// are the ones docs/program-format.md and docs/hardening.md document.
// (program_load_test.cpp covers the messages of far-beyond cases.)
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>

#include "et_ops/program.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::StatusCode;
using et_ops::LoadLimits;
using et_ops::LoadResult;
using et_ops::Program;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

struct Registered {
  Registered() { et_ops::test::register_test_kernels(); }
} registered;

// Loads and inspects `bytes` under `limits`; requires both to accept it.
void require_accepted(const std::vector<uint8_t>& bytes, const LoadLimits& limits) {
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, bytes, limits);
  INFO("load: " << loaded.status().message());
  CHECK(loaded.ok());
  const et_ops::Result<Program::Inspection> inspection = Program::inspect(dir.file("program.etp"), limits);
  INFO("inspect: " << inspection.status().message());
  CHECK(inspection.ok());
}

// Loads and inspects `bytes` under `limits`; requires both to refuse it
// with a message that names the file and contains `fragment`.
void require_refused(const std::vector<uint8_t>& bytes, const LoadLimits& limits, const std::string& fragment) {
  TempDir dir;
  const std::string path = dir.file("program.etp");
  const LoadResult loaded = et_ops::test::load_bytes(dir, bytes, limits);
  INFO("load: " << loaded.status().message());
  REQUIRE_FALSE(loaded.ok());
  CHECK(loaded.status().code() == et_ops::StatusCode::Format);
  CHECK_THAT(loaded.status().message(), Catch::StartsWith(path + ": ") && Catch::Contains(fragment));
  const et_ops::Result<Program::Inspection> inspection = Program::inspect(path, limits);
  CHECK(inspection.status().code() == et_ops::StatusCode::Format);
  CHECK_THAT(inspection.status().message(), Catch::StartsWith(path + ": ") && Catch::Contains(fragment));
}

// The activation memory the add_scale program plans under default limits.
std::size_t planned_bytes(const EtpWriter& w) {
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes());
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  return loaded.value()->planned_memory_bytes();
}

// A header whose "metadata" nests arrays so that the whole header is
// exactly `depth` levels deep (the header object is level 1, metadata 2).
std::vector<uint8_t> nested_program(int depth) {
  EtpWriter w = et_ops::test::add_scale_program();
  nlohmann::json inner = nlohmann::json::array();
  for (int level = 3; level < depth; ++level) inner = nlohmann::json::array({inner});
  w.header()["metadata"] = {{"nested", inner}};
  return w.bytes();
}

}  // namespace

TEST_CASE("the default limits are the documented ones") {
  const LoadLimits limits;
  CHECK(limits.max_memory_bytes == std::size_t(1) << 30);
  CHECK(limits.max_values == std::size_t(1) << 20);
  CHECK(limits.max_instructions == std::size_t(1) << 20);
  CHECK(limits.max_header_bytes == std::size_t(64) << 20);
  CHECK(limits.max_json_depth == 64);
}

TEST_CASE("activation memory: the planned bytes load, one byte less is refused") {
  const EtpWriter w = et_ops::test::add_scale_program();
  const std::size_t planned = planned_bytes(w);
  REQUIRE(planned > 0);
  LoadLimits limits;
  limits.max_memory_bytes = planned;
  require_accepted(w.bytes(), limits);
  limits.max_memory_bytes = planned - 1;
  require_refused(w.bytes(), limits, fmt::format("more than the limit of {} bytes", planned - 1));
}

TEST_CASE("activation memory counts every tensor live at once, not the largest one") {
  // Inputs and outputs live through the whole run: four of 4 KiB each.
  EtpWriter w("wide");
  std::vector<uint32_t> tensors;
  for (int i = 0; i < 4; ++i) tensors.push_back(w.tensor(et_ops::DType::Float32, {1024}));
  w.inputs({tensors[0], tensors[1]});
  w.outputs({tensors[2], tensors[3]});
  w.instruction("et_test_rt::add.out", {tensors[0], tensors[1], tensors[2]});
  w.instruction("et_test_rt::add.out", {tensors[1], tensors[0], tensors[3]});
  LoadLimits limits;
  limits.max_memory_bytes = 4 * 4096;
  require_accepted(w.bytes(), limits);
  limits.max_memory_bytes = 4 * 4096 - 1;
  require_refused(w.bytes(), limits, "needs 16384 bytes of activation memory");
}

TEST_CASE("a program beyond the default memory limit loads when the limit is raised") {
  // 2^29 float32 elements: 2 GiB, planned but never allocated by a load.
  EtpWriter w("big");
  const uint32_t x = w.tensor(et_ops::DType::Float32, {int64_t(1) << 29});
  const uint32_t y = w.tensor(et_ops::DType::Float32, {int64_t(1) << 29});
  w.inputs({x});
  w.outputs({y});
  w.instruction("et_test_rt::scale.out", {x, w.double_value(2.0), y});
  require_refused(w.bytes(), LoadLimits{}, "more than the memory limit of 1073741824 bytes");
  LoadLimits raised;
  raised.max_memory_bytes = std::size_t(8) << 30;
  TempDir dir;
  const LoadResult loaded = et_ops::test::load_bytes(dir, w.bytes(), raised);
  INFO(loaded.status().message());
  REQUIRE(loaded.ok());
  CHECK(loaded.value()->planned_memory_bytes() == std::size_t(4) << 30);
}

TEST_CASE("value count: the program's count loads, one less is refused") {
  const EtpWriter w = et_ops::test::add_scale_program();  // 5 values
  LoadLimits limits;
  limits.max_values = 5;
  require_accepted(w.bytes(), limits);
  limits.max_values = 4;
  require_refused(w.bytes(), limits, "values has 5 entries, more than the limit of 4");
}

TEST_CASE("instruction count: the program's count loads, one less is refused") {
  const EtpWriter w = et_ops::test::add_scale_program();  // 2 instructions
  LoadLimits limits;
  limits.max_instructions = 2;
  require_accepted(w.bytes(), limits);
  limits.max_instructions = 1;
  require_refused(w.bytes(), limits, "instructions has 2 entries, more than the limit of 1");
}

TEST_CASE("header size: the header's size loads, one byte less is refused") {
  const EtpWriter w = et_ops::test::add_scale_program();
  const std::size_t header = w.header().dump().size();
  LoadLimits limits;
  limits.max_header_bytes = header;
  require_accepted(w.bytes(), limits);
  limits.max_header_bytes = header - 1;
  require_refused(w.bytes(), limits, fmt::format("exceeds the limit of {} bytes", header - 1));
}

TEST_CASE("JSON depth: nesting at the limit loads, one level deeper is refused") {
  LoadLimits limits;
  limits.max_json_depth = 10;
  require_accepted(nested_program(10), limits);
  require_refused(nested_program(11), limits, "deeper than the limit of 10 levels");
  SECTION("the default limit of 64 levels") {
    require_accepted(nested_program(64), LoadLimits{});
    require_refused(nested_program(65), LoadLimits{}, "deeper than the limit of 64 levels");
  }
}
