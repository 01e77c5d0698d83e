// Both policies x both registration orders x identical / different copies,
// with real shared libraries loaded by dlopen.
#include <csignal>

#include <catch2/catch.hpp>

#include "copies.h"

using et_ops::DuplicatePolicy;
using et_ops::test::LoadedCopy;
using et_ops::test::run_in_child;

namespace {

struct PolicyGuard {
  explicit PolicyGuard(DuplicatePolicy p) { et_ops::set_duplicate_policy(p); }
  ~PolicyGuard() { et_ops::clear_duplicate_policy(); }
};

// Registers `first` then `second` in a child under `fatal`; returns the outcome.
et_ops::test::ChildOutcome fatal_pair(const char* first, const char* second) {
  return run_in_child([&] {
    et_ops::set_duplicate_policy(DuplicatePolicy::Fatal);
    LoadedCopy a(first);
    LoadedCopy b(second);
    if (!a.register_all()) _exit(3);
    (void)b.register_all();  // must abort before returning
    _exit(4);
  });
}

}  // namespace

TEST_CASE("fatal aborts on a second copy, identical or different, in either order", "[policy][fatal]") {
  struct Pair {
    const char* first;
    const char* second;
    bool identical;
  };
  const Pair orders[] = {{COPY_A_PATH, COPY_B_PATH, true},
                         {COPY_B_PATH, COPY_A_PATH, true},
                         {COPY_A_PATH, COPY_MODIFIED_PATH, false},
                         {COPY_MODIFIED_PATH, COPY_A_PATH, false}};
  for (auto [first, second, identical] : orders) {
    INFO(first << " then " << second);
    auto outcome = fatal_pair(first, second);
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGABRT);
    const std::string& text = outcome.stderr_text;
    CHECK(text.rfind("Re-registering et_test::", 0) == 0);  // the first line, searchable
    CHECK(text.find(et_ops::canonical_library_path(first)) != std::string::npos);
    CHECK(text.find(et_ops::canonical_library_path(second)) != std::string::npos);
    CHECK(text.find("component test_kernels") != std::string::npos);
    CHECK(text.find("kernel key:") != std::string::npos);
    // Says whether the copies are identical, and lists every way out.
    if (identical) {
      CHECK(text.find("Two identical copies of the same kernel") != std::string::npos);
      CHECK(text.find("the two copies:         identical: same schema and fingerprint") != std::string::npos);
      CHECK(text.find("different") == std::string::npos);
    } else {
      CHECK(text.find("Two different copies of the same kernel (their fingerprints differ)") != std::string::npos);
      CHECK(text.find("the two copies:         fingerprint ") != std::string::npos);
      CHECK(text.find("identical") == std::string::npos);
    }
    CHECK(text.find("link only one copy") != std::string::npos);
    CHECK(text.find("ET_OPS_DUPLICATE_POLICY=first-wins") != std::string::npos);
    CHECK(text.find("et-ops run --policy first-wins") != std::string::npos);
    CHECK(text.find("et_ops.set_duplicate_policy(\"first-wins\")") != std::string::npos);
    CHECK(text.find("et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins);") != std::string::npos);
    CHECK(text.find("-Dduplicate_policy=first-wins") != std::string::npos);
  }
}

TEST_CASE("fatal chosen through the environment aborts too", "[policy][fatal]") {
  auto outcome = run_in_child([] {
    setenv("ET_OPS_DUPLICATE_POLICY", "fatal", 1);
    LoadedCopy a(COPY_A_PATH);
    LoadedCopy b(COPY_B_PATH);
    (void)a.register_all();
    (void)b.register_all();
    _exit(4);
  });
  CHECK(outcome.signal == SIGABRT);
  CHECK(outcome.stderr_text.find("chosen by ET_OPS_DUPLICATE_POLICY") != std::string::npos);
}

TEST_CASE("first-wins keeps the first of two identical copies, in either order", "[policy][first-wins]") {
  PolicyGuard guard(DuplicatePolicy::FirstWins);
  LoadedCopy a(COPY_A_PATH);
  LoadedCopy b(COPY_B_PATH);
  for (bool a_first : {true, false}) {
    const LoadedCopy& first = a_first ? a : b;
    const LoadedCopy& second = a_first ? b : a;
    auto before = et_ops::counters();
    auto r1 = first.register_all();
    REQUIRE(r1.ok());
    CHECK(r1->registered == 3);
    auto r2 = second.register_all();
    REQUIRE(r2.ok());
    CHECK(r2->registered == 0);
    CHECK(r2->deduplicated == 3);
    auto after = et_ops::counters();
    CHECK(after.registered - before.registered == 3);
    CHECK(after.deduplicated - before.deduplicated == 3);
    CHECK(et_ops::lookup("et_test::add_offset.out") == first.function(0));

    // The shadow copy takes over when the first library goes away.
    CHECK(et_ops::unregister_library(first.path) == 3);
    CHECK(et_ops::lookup("et_test::add_offset.out") == second.function(0));
    CHECK(et_ops::unregister_library(second.path) == 3);
    CHECK(et_ops::lookup("et_test::add_offset.out") == nullptr);
  }
}

TEST_CASE("first-wins rejects a different copy in either order and keeps the first", "[policy][first-wins]") {
  PolicyGuard guard(DuplicatePolicy::FirstWins);
  LoadedCopy a(COPY_A_PATH);
  LoadedCopy modified(COPY_MODIFIED_PATH);
  for (bool a_first : {true, false}) {
    const LoadedCopy& first = a_first ? a : modified;
    const LoadedCopy& second = a_first ? modified : a;
    REQUIRE(first.register_all().ok());
    const std::string dump_before = et_ops::dump_records();
    auto conflicts_before = et_ops::counters().conflicts;
    auto rejected = second.register_all();
    CHECK(rejected.status().code() == et_ops::StatusCode::Conflict);
    CHECK(et_ops::dump_records() == dump_before);
    CHECK(et_ops::counters().conflicts - conflicts_before == 3);
    for (const char* op : {"et_test::add_offset.out", "et_test::negate.out", "et_test::identity.out"})
      CHECK(rejected.status().message().find(op) != std::string::npos);
    CHECK(rejected.status().message().find(first.path) != std::string::npos);
    CHECK(rejected.status().message().find(second.path) != std::string::npos);
    CHECK(rejected.status().message().find("fingerprint") != std::string::npos);
    CHECK(et_ops::lookup("et_test::add_offset.out") == first.function(0));
    CHECK(et_ops::unregister_library(first.path) == 3);
  }
}

TEST_CASE("the same function registered again is a no-op under every policy", "[policy]") {
  for (DuplicatePolicy policy : {DuplicatePolicy::Fatal, DuplicatePolicy::FirstWins}) {
    PolicyGuard guard(policy);
    LoadedCopy a(COPY_A_PATH);
    REQUIRE(a.register_all().ok());
    const std::string dump = et_ops::dump_records();
    auto again = a.register_all();
    REQUIRE(again.ok());
    CHECK(again->registered == 0);
    CHECK(again->unchanged == 3);
    CHECK(et_ops::dump_records() == dump);
  }
}

TEST_CASE("identical copies agree on fingerprints; a modified source changes them", "[fingerprint]") {
  LoadedCopy a(COPY_A_PATH);
  LoadedCopy b(COPY_B_PATH);
  LoadedCopy modified(COPY_MODIFIED_PATH);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(std::string(a.manifest->records[i].fingerprint) == b.manifest->records[i].fingerprint);
    CHECK(std::string(a.manifest->records[i].fingerprint) != modified.manifest->records[i].fingerprint);
    CHECK(std::string(a.manifest->records[i].schema) == modified.manifest->records[i].schema);
  }
  // Combined per operator: different operators of one library differ.
  CHECK(std::string(a.manifest->records[0].fingerprint) != a.manifest->records[1].fingerprint);
}
