// register_kernels(): registers one record per row of operators.def once,
// with this library as origin; a second call changes nothing; lookups then
// find the kernels.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "et_ops/kernels/portable.h"
#include "et_ops/registry.h"
#include "et_ops/value.h"
#include "test_util.h"

namespace {
constexpr std::size_t kOperators = 0
#define ET_OPS_OPERATOR(function, schema) +1
#include "kernels/portable/operators.def"
#undef ET_OPS_OPERATOR
    ;
}  // namespace

TEST_CASE("register_kernels: registers once, then reports unchanged", "[portable][registration]") {
  const et_ops_manifest& m = portable::manifest();
  REQUIRE(m.record_count == kOperators);

  const auto first = portable::register_kernels();
  INFO(first.status().message());
  REQUIRE(first.ok());
  CHECK(first->registered == kOperators);
  CHECK(first->unchanged == 0);

  const auto second = portable::register_kernels();
  REQUIRE(second.ok());
  CHECK(second->registered == 0);
  CHECK(second->unchanged == kOperators);
  CHECK(second->deduplicated == 0);

  for (std::size_t i = 0; i < m.record_count; ++i) {
    CHECK(et_ops::has_operator(m.records[i].op));
    CHECK(et_ops::lookup(m.records[i].op) == m.records[i].fn);
  }

  std::size_t portable_records = 0;
  for (const et_ops::RecordInfo& r : et_ops::registered_records()) {
    if (r.origin.component != portable::kComponent) continue;
    ++portable_records;
    INFO(r.op << " from " << r.origin.library_path);
    CHECK(r.origin.library_path.find("libet_kernels_portable.so") != std::string::npos);
    CHECK(r.key.empty());
    bool matched = false;
    for (std::size_t i = 0; i < m.record_count; ++i)
      if (r.op == m.records[i].op)
        matched = r.schema == m.records[i].schema && r.fingerprint == m.records[i].fingerprint;
    CHECK(matched);
  }
  CHECK(portable_records == static_cast<int>(kOperators));
}

TEST_CASE("registered kernels run through a lookup", "[portable][registration]") {
  REQUIRE(portable::register_kernels().ok());
  et_ops_kernel_fn relu = et_ops::lookup("aten::relu.out");
  REQUIRE(relu != nullptr);
  et_ops::test::Owned<float> x({3}, {-1, 0.5f, -0.25f});
  et_ops::test::Owned<float> out({3}, {9, 9, 9});
  std::vector<et_ops_value> args = {et_ops::tensor_value(x.raw()), et_ops::tensor_value(out.raw())};
  const auto ctx = et_ops::call_kernel(relu, args);
  REQUIRE(ctx.ok());
  CHECK(out.values == std::vector<float>{0, 0.5f, 0});
}
