// Eight threads registering, unregistering and looking up at once.
#include <atomic>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "copies.h"

TEST_CASE("8 threads register, unregister and look up at once", "[registry][threads]") {
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins);
  et_ops::test::LoadedCopy a(COPY_A_PATH);
  et_ops::test::LoadedCopy b(COPY_B_PATH);
  const et_ops_kernel_fn valid[] = {a.function(0), b.function(0)};

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<long> lookups{0};
  auto writer = [&](const et_ops::test::LoadedCopy& copy) {
    for (int i = 0; i < 2000; ++i) {
      if (!copy.register_all().ok()) ++failures;
      (void)et_ops::unregister_library(copy.path);
    }
  };
  auto reader = [&] {
    while (!stop.load()) {
      et_ops_kernel_fn fn = et_ops::lookup("et_test::add_offset.out");
      if (fn != nullptr && fn != valid[0] && fn != valid[1]) ++failures;
      (void)et_ops::registered_records();
      ++lookups;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 6; ++i) readers.emplace_back(reader);
  std::thread w1(writer, std::cref(a));
  std::thread w2(writer, std::cref(b));
  w1.join();
  w2.join();
  stop = true;
  for (auto& t : readers) t.join();

  CHECK(failures.load() == 0);
  CHECK(lookups.load() > 0);
  CHECK(et_ops::lookup("et_test::add_offset.out") == nullptr);  // every registration was undone
  REQUIRE(a.register_all().ok());
  CHECK(et_ops::lookup("et_test::add_offset.out") == a.function(0));
  et_ops::clear_duplicate_policy();
}
