// Truncated and corrupted programs: loading never crashes, and a program
// that still loads runs without touching memory it does not own (the
// sanitizer build checks the second half).
#include <catch2/catch.hpp>

#include "et_ops/program.h"
#include "program_fixtures.h"
#include "test_kernels.h"

using et_ops::LoadResult;
using et_ops::test::EtpWriter;
using et_ops::test::TempDir;

namespace {

struct Registered {
  Registered() { et_ops::test::register_test_kernels(); }
} registered;

// Without constants, so no corruption can turn a constant into an output
// that a kernel writes (which faults by design: constants are read-only).
EtpWriter program_without_constants() {
  EtpWriter w("chain");
  const uint32_t x = w.tensor(et_ops::DType::Float32, {2, 3});
  const uint32_t t = w.tensor(et_ops::DType::Float32, {2, 3});
  const uint32_t factor = w.double_value(2.0);
  const uint32_t y = w.tensor(et_ops::DType::Float32, {2, 3});
  w.inputs({x});
  w.outputs({y, factor});
  w.instruction("et_test_rt::add.out", {x, x, t});
  w.instruction("et_test_rt::scale.out", {t, factor, y});
  return w;
}

// Loads the bytes; a program that loads is given zeroed inputs and run.
// Returns whether it loaded.
bool load_and_maybe_run(const TempDir& dir, const std::vector<uint8_t>& bytes, bool run) {
  const LoadResult result = et_ops::test::load_bytes(dir, bytes);
  if (!result.ok()) {
    CHECK_FALSE(result.status().message().empty());
    return false;
  }
  auto state = result.value()->make_state();
  if (run) (void)result.value()->run(*state);
  return true;
}

}  // namespace

TEST_CASE("a truncated program never crashes the loader and never loads") {
  TempDir dir;
  for (const EtpWriter& w : {program_without_constants(), et_ops::test::add_scale_program()}) {
    const std::vector<uint8_t> bytes = w.bytes();
    REQUIRE(load_and_maybe_run(dir, bytes, false));
    std::size_t header_end = 16 + w.header().dump().size();
    for (std::size_t size = 0; size < bytes.size(); ++size) {
      const std::vector<uint8_t> truncated(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
      INFO("truncated to " << size << " bytes");
      // Cutting only padding keeps a program without constants valid.
      const bool may_load = size >= header_end && w.data().empty();
      if (!may_load) CHECK_FALSE(load_and_maybe_run(dir, truncated, false));
    }
  }
}

TEST_CASE("corrupted bytes never crash the loader or the run") {
  TempDir dir;
  const std::vector<uint8_t> bytes = program_without_constants().bytes();
  std::size_t loaded = 0;
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (uint8_t flip : {0xFF, 0x01, 0x04, 0x10}) {
      std::vector<uint8_t> corrupted = bytes;
      corrupted[at] ^= flip;
      if (load_and_maybe_run(dir, corrupted, true)) ++loaded;
    }
  CHECK(loaded > 0);  // some flips (in padding, digits, names) keep a loadable program
}

TEST_CASE("corrupting a program with constants never crashes the loader") {
  TempDir dir;
  const std::vector<uint8_t> bytes = et_ops::test::add_scale_program().bytes();
  for (std::size_t at = 0; at < bytes.size(); ++at)
    for (uint8_t flip : {0xFF, 0x01, 0x02, 0x08}) {
      std::vector<uint8_t> corrupted = bytes;
      corrupted[at] ^= flip;
      load_and_maybe_run(dir, corrupted, false);
    }
}
