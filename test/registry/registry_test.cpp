// Registration, lookup, atomic batches, unregistering, introspection and the
// C ABI of the registry, with manifests built in this test executable.
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "copies.h"
#include "et_ops/registry.h"
#include "et_ops/value.h"
#include "registry/fault_injection.h"

namespace {

void kernel_one(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}
void kernel_two(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}
void kernel_int8(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

struct Manifest {
  std::vector<et_ops_kernel_record> records;
  et_ops_manifest raw{};
  Manifest(const char* component, std::vector<et_ops_kernel_record> r) : records(std::move(r)) {
    raw = et_ops_manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), component, "9.9", records.data(),
                          records.size()};
  }
};

struct FirstWins {
  FirstWins() { et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins); }
  ~FirstWins() {
    et_ops::clear_duplicate_policy();
    et_ops::unregister_library("/proc/self/exe");
  }
};

const std::string self_path = et_ops::canonical_library_path("/proc/self/exe");

// The kernel that `op` resolves to for one contiguous int8 tensor.
et_ops_kernel_fn lookup_for_int8(const char* op) {
  int8_t storage[4] = {};
  et_ops::Tensor tensor(et_ops::DType::Int8, storage, {4});
  const et_ops_tensor* args[] = {tensor.raw()};
  return et_ops::lookup(op, args, 1);
}

// The keys of op's records, in registered_records() order.
std::vector<std::string> keys_of(const char* op) {
  std::vector<std::string> keys;
  for (const auto& r : et_ops::registered_records())
    if (r.op == op) keys.push_back(r.key);
  return keys;
}

}  // namespace

TEST_CASE("a registered batch is visible with its origin, schema and fingerprint", "[registry]") {
  FirstWins guard;
  Manifest m("unit", {{"unit::one.out", "", &kernel_one, "unit::one.out() -> ()", "fp-one"},
                      {"unit::two.out", "", &kernel_two, "unit::two.out() -> ()", "fp-two"}});
  auto result = et_ops::register_manifest(m.raw);
  REQUIRE(result.ok());
  CHECK(result->registered == 2);
  CHECK(et_ops::lookup("unit::one.out") == &kernel_one);
  CHECK(et_ops::has_operator("unit::two.out"));
  CHECK(et_ops::lookup("unit::three.out") == nullptr);

  bool seen = false;
  for (const auto& r : et_ops::registered_records()) {
    if (r.op != "unit::one.out") continue;
    seen = true;
    CHECK(r.key.empty());
    CHECK(r.schema == "unit::one.out() -> ()");
    CHECK(r.fingerprint == "fp-one");
    CHECK(r.origin.component == "unit");
    CHECK(r.origin.version == "9.9");
    CHECK(r.origin.library_path == self_path);  // found with dladdr
    CHECK(r.active);
  }
  CHECK(seen);
  CHECK(et_ops::dump_records().find("unit::two.out\tfallback\tunit\t9.9\t" + self_path + "\tfp-two\tactive") !=
        std::string::npos);
}

TEST_CASE("lookup prefers a matching specialised kernel and falls back otherwise", "[registry][key]") {
  FirstWins guard;
  et_ops::KernelKey int8_key({{et_ops::DType::Int8, {0, 1}}});
  const std::string key = int8_key.text();
  CHECK(key == "v1/4;0,1");
  Manifest m("unit", {{"unit::spec.out", "", &kernel_one, "s", "f"},
                      {"unit::spec.out", key.c_str(), &kernel_int8, "s", "f"}});
  REQUIRE(et_ops::register_manifest(m.raw).ok());

  int8_t storage[4] = {};
  et_ops::Tensor int8_tensor(et_ops::DType::Int8, storage, {2, 2});
  et_ops::Tensor transposed(et_ops::DType::Int8, storage, {2, 2}, {1, 0});
  et_ops::Tensor uint8_tensor(et_ops::DType::UInt8, storage, {2, 2});
  const et_ops_tensor* args[] = {int8_tensor.raw()};
  CHECK(et_ops::lookup("unit::spec.out", args, 1) == &kernel_int8);
  args[0] = transposed.raw();
  CHECK(et_ops::lookup("unit::spec.out", args, 1) == &kernel_one);
  args[0] = uint8_tensor.raw();
  CHECK(et_ops::lookup("unit::spec.out", args, 1) == &kernel_one);
  CHECK(et_ops::lookup("unit::spec.out") == &kernel_one);
}

TEST_CASE("kernel keys round-trip and reject malformed text", "[key]") {
  auto key = et_ops::KernelKey::parse("v1/6;0,1|6;1,0");
  REQUIRE(key);
  CHECK(key->metas().size() == 2);
  CHECK(key->text() == "v1/6;0,1|6;1,0");
  CHECK(et_ops::KernelKey::parse("")->is_fallback());
  for (const char* bad : {"v2/6;0", "v1/", "v1/99;0", "v1/6", "v1/6;x", "v1/6;0|", "6;0"}) {
    INFO(bad);
    const et_ops::Result<et_ops::KernelKey> refused = et_ops::KernelKey::parse(bad);
    CHECK(refused.status().code() == et_ops::StatusCode::Invalid);
    CHECK(refused.status().message().rfind(std::string("'") + bad + "' is not a kernel key: ", 0) == 0);
  }
  CHECK(et_ops::KernelKey::parse("v1/6;0|6;x").status().message() ==
        "'v1/6;0|6;x' is not a kernel key: tensor 1 ('6;x') is not <dtype number>;<dim order>");
}

TEST_CASE("a rejected batch registers nothing and leaves the dump byte-for-byte unchanged", "[registry][atomic]") {
  FirstWins guard;
  et_ops::test::LoadedCopy a(COPY_A_PATH);
  REQUIRE(a.register_all().ok());
  const std::string before = et_ops::dump_records();
  // One new operator and one that differs from copy_a's: all or nothing.
  Manifest m("unit", {{"unit::fresh.out", "", &kernel_one, "s", "f"},
                      {"et_test::negate.out", "", &kernel_two,
                       "et_test::negate.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", "another-fingerprint"}});
  auto result = et_ops::register_manifest(m.raw);
  CHECK(result.status().code() == et_ops::StatusCode::Conflict);
  CHECK(result.status().message().find("et_test::negate.out") != std::string::npos);
  CHECK(result.status().message().find("unit::fresh.out") == std::string::npos);
  CHECK(et_ops::dump_records() == before);
  CHECK_FALSE(et_ops::has_operator("unit::fresh.out"));
}

TEST_CASE("an injected allocation failure leaves the registry unchanged", "[registry][atomic]") {
  FirstWins guard;
  Manifest m("unit", {{"unit::a.out", "", &kernel_one, "s", "f"}, {"unit::b.out", "", &kernel_two, "s", "f"}});
  const std::string before = et_ops::dump_records();
  const auto counters_before = et_ops::counters();
  for (int failing_record : {0, 1}) {
    INFO("allocation " << failing_record << " fails");
    et_ops::detail::inject_registration_allocation_failure(failing_record);
    auto result = et_ops::register_manifest(m.raw);
    et_ops::detail::inject_registration_allocation_failure(-1);
    CHECK(result.status().code() == et_ops::StatusCode::NoMemory);
    CHECK(result.status().message().find("unchanged") != std::string::npos);
    CHECK(et_ops::dump_records() == before);
    CHECK_FALSE(et_ops::has_operator("unit::a.out"));
    const auto counters_after = et_ops::counters();
    CHECK(counters_after.registered == counters_before.registered);
    CHECK(counters_after.deduplicated == counters_before.deduplicated);
    CHECK(counters_after.conflicts == counters_before.conflicts);
  }
  CHECK(et_ops::register_manifest(m.raw).ok());
}

TEST_CASE("unregistering a library removes its records; lookups then fail cleanly", "[registry][unregister]") {
  FirstWins guard;
  et_ops::test::LoadedCopy a(COPY_A_PATH);
  REQUIRE(a.register_all().ok());
  CHECK(et_ops::lookup("et_test::negate.out") == a.function(1));
  auto removed_before = et_ops::counters().unregistered;
  CHECK(et_ops::unregister_library(COPY_A_PATH) == 3);  // any path that resolves to the library
  CHECK(et_ops::counters().unregistered - removed_before == 3);
  CHECK(et_ops::lookup("et_test::negate.out") == nullptr);
  CHECK_FALSE(et_ops::has_operator("et_test::negate.out"));
  CHECK(et_ops::unregister_library(COPY_A_PATH) == 0);
  CHECK(et_ops::unregister_library("/no/such/library.so") == 0);
}

TEST_CASE("malformed manifests are refused with a reason", "[registry][abi]") {
  FirstWins guard;
  Manifest good("unit", {{"unit::x.out", "", &kernel_one, "s", "f"}});

  Manifest bad_version = Manifest("unit", good.records);
  bad_version.raw.abi_version = 99;
  auto r = et_ops::register_manifest(bad_version.raw);
  CHECK(r.status().code() == et_ops::StatusCode::Invalid);
  CHECK(r.status().message().find("ABI version 99") != std::string::npos);

  Manifest no_fn("unit", {{"unit::x.out", "", nullptr, "s", "f"}});
  CHECK(et_ops::register_manifest(no_fn.raw).status().message().find("no function") != std::string::npos);

  Manifest bad_key("unit", {{"unit::x.out", "v7/zz", &kernel_one, "s", "f"}});
  CHECK(et_ops::register_manifest(bad_key.raw).status().message().find("invalid kernel key") != std::string::npos);

  Manifest twice("unit", {{"unit::x.out", "", &kernel_one, "s", "f"}, {"unit::x.out", "", &kernel_two, "s", "f"}});
  CHECK(et_ops::register_manifest(twice.raw).status().message().find("appears twice") != std::string::npos);
  CHECK_FALSE(et_ops::has_operator("unit::x.out"));

  auto c_result = et_ops_register_manifest(nullptr);
  CHECK(c_result.status == ET_OPS_ERROR_INVALID);
  REQUIRE(c_result.message != nullptr);
  et_ops_string_free(c_result.message);
}

TEST_CASE("the C ABI registers, looks up and unregisters", "[registry][abi]") {
  FirstWins guard;
  et_ops::test::LoadedCopy a(COPY_A_PATH);
  auto result = et_ops_register_manifest(a.manifest);
  CHECK(result.status == ET_OPS_OK);
  CHECK(result.registered == 3);
  CHECK(result.message == nullptr);
  CHECK(et_ops_lookup_fallback("et_test::add_offset.out") == a.function(0));

  // Call it through the registry with a real tensor.
  int64_t in[3] = {1, 2, 3};
  int64_t out[3] = {};
  et_ops::Tensor tin(et_ops::DType::Int64, in, {3});
  et_ops::Tensor tout(et_ops::DType::Int64, out, {3});
  std::vector<et_ops_value> args = {et_ops::tensor_value(tin), et_ops::tensor_value(tout)};
  auto ctx = et_ops::call_kernel(et_ops_lookup_fallback("et_test::add_offset.out"), args);
  CHECK(ctx.ok());
  CHECK(out[2] == 4);

  CHECK(et_ops_unregister_library(a.path.c_str()) == 3);
  CHECK(et_ops_lookup_fallback("et_test::add_offset.out") == nullptr);
}

TEST_CASE("short operator names survive the table growing (names stored inside the string)", "[registry]") {
  FirstWins guard;
  Manifest first("unit", {{"u::a", "", &kernel_one, "s", "f"}, {"u::b", "", &kernel_two, "s", "f"}});
  REQUIRE(et_ops::register_manifest(first.raw).ok());
  std::vector<std::string> names;
  for (int i = 0; i < 64; ++i) names.push_back("u::n" + std::to_string(i));
  std::vector<et_ops_kernel_record> records;
  for (const auto& n : names) records.push_back({n.c_str(), "", &kernel_one, "s", "f"});
  Manifest many("unit", records);
  REQUIRE(et_ops::register_manifest(many.raw).ok());
  auto again = et_ops::register_manifest(first.raw);  // the existing entries must be found, not duplicated
  REQUIRE(again.ok());
  CHECK(again->unchanged == 2);
  CHECK(again->registered == 0);
  std::size_t entries_for_a = 0;
  for (const auto& r : et_ops::registered_records()) entries_for_a += r.op == "u::a";
  CHECK(entries_for_a == 1);
  CHECK(et_ops::lookup("u::b") == &kernel_two);
}

TEST_CASE("an operator's records need not be consecutive in a batch", "[registry][key]") {
  FirstWins guard;
  const std::string key = et_ops::KernelKey({{et_ops::DType::Int8, {}}}).text();
  Manifest m("unit", {{"unit::split.out", key.c_str(), &kernel_int8, "s", "f"},
                      {"unit::between.out", "", &kernel_two, "s", "f"},
                      {"unit::split.out", "", &kernel_one, "s", "f"}});
  auto result = et_ops::register_manifest(m.raw);
  REQUIRE(result.ok());
  CHECK(result->registered == 3);
  CHECK(lookup_for_int8("unit::split.out") == &kernel_int8);
  CHECK(et_ops::lookup("unit::split.out") == &kernel_one);
  CHECK(et_ops::lookup("unit::between.out") == &kernel_two);
  CHECK(keys_of("unit::split.out") == std::vector<std::string>{"", key});
}

TEST_CASE("a later batch adds a key to an operator already registered", "[registry][key]") {
  FirstWins guard;
  Manifest first("unit", {{"unit::grows.out", "", &kernel_one, "s", "f"},
                          {"unit::stays.out", "", &kernel_two, "s", "f"}});
  REQUIRE(et_ops::register_manifest(first.raw).ok());
  const std::string key = et_ops::KernelKey({{et_ops::DType::Int8, {}}}).text();
  Manifest second("unit", {{"unit::fresh.out", "", &kernel_two, "s", "f"},
                           {"unit::grows.out", key.c_str(), &kernel_int8, "s", "f"}});
  auto result = et_ops::register_manifest(second.raw);
  REQUIRE(result.ok());
  CHECK(result->registered == 2);
  CHECK(lookup_for_int8("unit::grows.out") == &kernel_int8);
  CHECK(et_ops::lookup("unit::grows.out") == &kernel_one);
  CHECK(et_ops::lookup("unit::stays.out") == &kernel_two);
  CHECK(et_ops::lookup("unit::fresh.out") == &kernel_two);
  CHECK(keys_of("unit::grows.out") == std::vector<std::string>{"", key});
}

TEST_CASE("a schema that starts with its operator keeps its text and what it says", "[registry][schema]") {
  FirstWins guard;
  const char* const add = "unit::add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)";
  const char* const mul = "unit::mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)";
  const char* const odd = "unit::other.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)";  // names another operator
  const char* const bad = "unit::bad name(Tensor self, *, Tensor(a!) out) -> Tensor(a!)";   // does not parse
  Manifest m("unit", {{"unit::add.out", "", &kernel_one, add, "f"},
                      {"unit::mul.out", "", &kernel_two, mul, "f"},
                      {"unit::odd.out", "", &kernel_one, odd, "f"},
                      {"unit::bad name", "", &kernel_two, bad, "f"}});
  REQUIRE(et_ops::register_manifest(m.raw).ok());
  for (const auto& r : et_ops::registered_records()) {
    if (r.op == "unit::add.out") CHECK(r.schema == add);
    if (r.op == "unit::mul.out") CHECK(r.schema == mul);
    if (r.op == "unit::odd.out") CHECK(r.schema == odd);
    if (r.op == "unit::bad name") CHECK(r.schema == bad);
  }
  const et_ops::ResolvedKernel mul_kernel = et_ops::lookup_kernel("unit::mul.out");
  CHECK(mul_kernel.argument_count == 3);
  CHECK(mul_kernel.writes(2));
  CHECK_FALSE(mul_kernel.writes(0));
  CHECK(et_ops::lookup_kernel("unit::odd.out").argument_count == 2);
  CHECK(et_ops::lookup_kernel("unit::bad name").argument_count == -1);
}

namespace {
int prepared_state;
void* prepare_stub(et_ops_kernel_context*, et_ops_value* const*, std::size_t) { return &prepared_state; }
void release_stub(void*) {}
void run_stub(et_ops_kernel_context*, const void*, void*, const et_ops_run_environment*, et_ops_value* const*,
              std::size_t) {}
const et_ops_prepared_kernel prepared_stub{sizeof(et_ops_prepared_kernel), 0, &prepare_stub, &release_stub,
                                           nullptr, nullptr, &run_stub};
}  // namespace

TEST_CASE("a version 2 manifest keeps each prepared kernel's functions with its record", "[registry][abi]") {
  FirstWins guard;
  const std::string key = et_ops::KernelKey({{et_ops::DType::Int8, {}}}).text();
  // Text of several lengths, so the kept pointers land after text of every alignment.
  std::vector<et_ops_kernel_record_v2> records = {
      {{"unit::p.out", "", &kernel_one, "unit::p.out(Tensor a) -> ()", "f"}, ET_OPS_KERNEL_PREPARED, 0, &prepared_stub},
      {{"unit::plain.out", "", &kernel_two, "s", "fp-7"}, ET_OPS_KERNEL_PLAIN, 0, nullptr},
      {{"unit::p.out", key.c_str(), &kernel_int8, "unit::p.out(Tensor a) -> ()", "fingerprint"},
       ET_OPS_KERNEL_PREPARED, 0, &prepared_stub},
      {{"unit::prepared_too.out", "", &kernel_two, "s", "0123456"}, ET_OPS_KERNEL_PREPARED, 0, &prepared_stub}};
  et_ops_manifest m{ET_OPS_ABI_VERSION_PREPARED, sizeof(et_ops_kernel_record_v2), "unit", "9.9", &records[0].base,
                    records.size()};
  auto result = et_ops::register_manifest(m);
  REQUIRE(result.ok());
  CHECK(result->registered == 4);
  const et_ops::ResolvedKernel p = et_ops::lookup_kernel("unit::p.out");
  CHECK(p.fn == &kernel_one);
  CHECK(p.prepared == &prepared_stub);
  CHECK(p.argument_count == 1);
  CHECK(et_ops::lookup_kernel("unit::plain.out").prepared == nullptr);
  CHECK(et_ops::lookup_kernel("unit::prepared_too.out").prepared == &prepared_stub);
  CHECK(lookup_for_int8("unit::p.out") == &kernel_int8);
  for (const auto& r : et_ops::registered_records()) {
    if (r.op == "unit::plain.out") CHECK(r.fingerprint == "fp-7");
    if (r.op == "unit::prepared_too.out") CHECK(r.fingerprint == "0123456");
    if (r.op == "unit::p.out") CHECK(r.fingerprint == (r.key.empty() ? "f" : "fingerprint"));
  }

  records[1].kind = 7;
  CHECK(et_ops::register_manifest(m).status().message().find("unknown kernel kind 7") != std::string::npos);
  records[1].kind = ET_OPS_KERNEL_PREPARED;  // without its functions
  CHECK(et_ops::register_manifest(m).status().message().find("prepared kernel without") != std::string::npos);
}
