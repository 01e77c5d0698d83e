// The kernel library kit (et_ops/kernel_library.h): every schema type
// reaches its C++ parameter, wrong arguments are named, a signature that
// does not match its schema is refused by register_kernels() with the
// operator and the argument, and fingerprints follow the digest.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include "et_ops/fingerprint.h"
#include "et_ops/kernel_library.h"
#include "et_ops/value.h"

namespace {

// What the typed kernels below received.
struct Seen {
  int64_t i = 0;
  std::optional<int64_t> oi;
  double f = 0;
  std::optional<double> of;
  bool b = false;
  std::optional<bool> ob;
  et_ops::Scalar s = 0;
  std::optional<et_ops::Scalar> os;
  et_ops::DType t = et_ops::DType::Float32;
  std::optional<et_ops::DType> ot;
  std::vector<int64_t> list;
  std::optional<std::vector<int64_t>> olist;
  std::optional<float> tensor_first;
  bool optional_tensor = false;
} seen;

bool everything(et_ops::KernelContext& ctx, et_ops::TensorRef self, std::optional<et_ops::TensorRef> maybe,
                int64_t i, std::optional<int64_t> oi, double f, std::optional<double> of, bool b,
                std::optional<bool> ob, et_ops::Scalar s, std::optional<et_ops::Scalar> os, et_ops::DType t,
                std::optional<et_ops::DType> ot, et_ops::IntList list, std::optional<et_ops::IntList> olist,
                et_ops::TensorRef out) {
  seen.tensor_first = self.data_as<float>()[0];
  seen.optional_tensor = maybe.has_value();
  seen.i = i, seen.oi = oi, seen.f = f, seen.of = of, seen.b = b, seen.ob = ob, seen.s = s, seen.os = os;
  seen.t = t, seen.ot = ot;
  seen.list.assign(list.begin(), list.end());
  if (olist) seen.olist = std::vector<int64_t>(olist->begin(), olist->end());
  else seen.olist.reset();
  out.data_as<float>()[0] = 1.0f;
  return ctx.ok();
}

constexpr const char* kEverythingSchema =
    "kit_test::everything.out(Tensor self, Tensor? maybe, SymInt i, int? oi, float f, float? of, bool b, bool? ob, "
    "Scalar s, Scalar? os, ScalarType t, ScalarType? ot, SymInt[2] list, int[]? olist, *, Tensor(a!) out) -> "
    "Tensor(a!)";

// Checked at compile time: a constexpr definition.
constexpr et_ops::KernelDefinition kEverything = et_ops::kernel<&everything>(kEverythingSchema);

bool sum_first(et_ops::KernelContext& ctx, et_ops::TensorList tensors, et_ops::TensorRef out) {
  float total = 0.0f;
  for (int64_t i = 0; i < tensors.size(); ++i) total += tensors[i].data_as<float>()[0];
  out.data_as<float>()[0] = total;
  return ctx.ok();
}

bool scale(et_ops::KernelContext& ctx, et_ops::TensorRef, double, et_ops::TensorRef) { return ctx.ok(); }
bool takes_int(et_ops::KernelContext& ctx, et_ops::TensorRef, int64_t, et_ops::TensorRef) { return ctx.ok(); }
bool one_tensor(et_ops::KernelContext& ctx, et_ops::TensorRef) { return ctx.ok(); }

}  // namespace

TEST_CASE("every schema type arrives as its parameter type", "[kit]") {
  static const et_ops::KernelLibrary library("kit_test", "1.0", {kEverything}, "digest");
  REQUIRE(library.ok());
  REQUIRE(library.manifest().record_count == 1);
  const et_ops_kernel_record& record = library.manifest().records[0];
  CHECK(std::string(record.op) == "kit_test::everything.out");
  CHECK(std::string(record.schema) == kEverythingSchema);
  CHECK(std::string(record.fingerprint) == et_ops::operator_fingerprint("digest", "kit_test::everything.out"));

  float in = 3.5f, out = 0.0f;
  et_ops::Tensor self(et_ops::DType::Float32, &in, {1});
  et_ops::Tensor result(et_ops::DType::Float32, &out, {1});
  const int64_t list[] = {4, 5};
  const int64_t olist[] = {6};
  std::vector<et_ops_value> args = {
      et_ops::tensor_value(self),   et_ops::tensor_value(self),   et_ops::int_value(7),
      et_ops::int_value(-8),        et_ops::int_value(2),         et_ops::double_value(0.25),
      et_ops::bool_value(true),     et_ops::bool_value(false),    et_ops::int_value(9),
      et_ops::double_value(1.5),    et_ops::scalar_type_value(et_ops::DType::Int8),
      et_ops::scalar_type_value(et_ops::DType::UInt8),
      et_ops::int_list_value(list, 2), et_ops::int_list_value(olist, 1), et_ops::tensor_value(result)};
  et_ops::KernelContext ctx = et_ops::call_kernel(record.fn, args);
  REQUIRE(ctx.ok());
  CHECK(out == 1.0f);
  CHECK(seen.tensor_first == 3.5f);
  CHECK(seen.optional_tensor);
  CHECK(seen.i == 7);
  CHECK(seen.oi == -8);
  CHECK(seen.f == 2.0);  // an int value is accepted for float, exactly
  CHECK(seen.of == 0.25);
  CHECK(seen.b);
  CHECK(seen.ob == false);
  CHECK((seen.s.is_integral() && seen.s.to_int() == 9));
  CHECK((seen.os && !seen.os->is_integral() && seen.os->to_double() == 1.5));
  CHECK(seen.t == et_ops::DType::Int8);
  CHECK(seen.ot == et_ops::DType::UInt8);
  CHECK(seen.list == std::vector<int64_t>{4, 5});
  CHECK(seen.olist == std::vector<int64_t>{6});

  // Every optional argument given as none.
  for (std::size_t i : {1, 3, 5, 7, 9, 11, 13}) args[i] = et_ops::none_value();
  REQUIRE(et_ops::call_kernel(record.fn, args).ok());
  CHECK_FALSE(seen.optional_tensor);
  CHECK_FALSE(seen.oi.has_value());
  CHECK_FALSE(seen.of.has_value());
  CHECK_FALSE(seen.ob.has_value());
  CHECK_FALSE(seen.os.has_value());
  CHECK_FALSE(seen.ot.has_value());
  CHECK_FALSE(seen.olist.has_value());
}

TEST_CASE("Tensor[] arrives as a TensorList", "[kit]") {
  static const et_ops::KernelLibrary library(
      "kit_test", "1.0", {et_ops::kernel<&sum_first>("kit_test::sum_first.out(Tensor[] tensors, *, Tensor(a!) out) -> ()")});
  REQUIRE(library.ok());
  const et_ops_kernel_fn fn = library.manifest().records[0].fn;
  float a = 1.5f, b = 2.0f, out = 0.0f;
  et_ops::Tensor ta(et_ops::DType::Float32, &a, {1}), tb(et_ops::DType::Float32, &b, {1});
  et_ops::Tensor result(et_ops::DType::Float32, &out, {1});
  et_ops_tensor* elements[] = {ta.raw(), tb.raw()};
  et_ops_value list{};
  list.tag = ET_OPS_VALUE_TENSOR_LIST;
  list.u.tensor_list = et_ops_tensor_list{elements, 2};
  std::vector<et_ops_value> args = {list, et_ops::tensor_value(result)};
  REQUIRE(et_ops::call_kernel(fn, args).ok());
  CHECK(out == 3.5f);
  elements[1] = nullptr;
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::sum_first.out: argument 0 ('tensors') holds a null tensor at 1");
}

// A tensor that describes more elements than its sizes hold (a numel that
// is not their product, as a fuzzed input once gave et_xnnpack::hardswish,
// which then read past the data), a negative size or an invalid dtype code
// is refused by the argument reader: no kernel ever sees it.
namespace {
int counted_calls = 0;
bool counted(et_ops::KernelContext& ctx, et_ops::TensorRef, double, et_ops::TensorRef) {
  ++counted_calls;
  return ctx.ok();
}
}  // namespace

TEST_CASE("a tensor whose description is inconsistent never reaches the kernel", "[kit]") {
  int& calls = counted_calls;
  static const et_ops::KernelLibrary library(
      "kit_test", "1.0",
      {et_ops::kernel<&counted>("kit_test::counted.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)")});
  REQUIRE(library.ok());
  const et_ops_kernel_fn fn = library.manifest().records[0].fn;
  float x[2] = {}, y[2] = {};
  et_ops::Tensor self(et_ops::DType::Float32, x, {1}), out(et_ops::DType::Float32, y, {1});
  std::vector<et_ops_value> args = {et_ops::tensor_value(self), et_ops::double_value(2.0), et_ops::tensor_value(out)};
  REQUIRE(et_ops::call_kernel(fn, args).ok());
  REQUIRE(calls == 1);
  self.raw()->numel = 2;
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::counted.out: argument 0 ('self') has numel 2 but sizes [1] hold 1 elements");
  self.raw()->numel = 1;
  out.raw()->dtype = 99;
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::counted.out: argument 2 ('out') has an invalid dtype code 99");
  CHECK(calls == 1);
}

namespace {
std::string seen_mode;
std::vector<bool> seen_present;
bool pick(et_ops::KernelContext& ctx, et_ops::OptionalTensorList indices, std::string_view mode, et_ops::TensorRef out) {
  seen_mode = std::string(mode);
  seen_present.clear();
  for (int64_t i = 0; i < indices.size(); ++i) seen_present.push_back(indices[i].has_value());
  (void)out;
  return ctx.ok();
}
}  // namespace

TEST_CASE("Tensor?[] arrives as an OptionalTensorList, str as a string_view", "[kit]") {
  static const et_ops::KernelLibrary library(
      "kit_test", "1.0",
      {et_ops::kernel<&pick>("kit_test::pick.out(Tensor?[] indices, *, str mode='a', Tensor(a!) out) -> Tensor(a!)")});
  REQUIRE(library.ok());
  const et_ops_kernel_fn fn = library.manifest().records[0].fn;
  float x = 0.0f;
  et_ops::Tensor t(et_ops::DType::Float32, &x, {1});
  et_ops_tensor* elements[] = {nullptr, t.raw()};
  const std::string mode = "tanh";
  std::vector<et_ops_value> args = {et_ops::optional_tensor_list_value(elements, 2), et_ops::string_value(mode),
                                    et_ops::tensor_value(t)};
  REQUIRE(et_ops::call_kernel(fn, args).ok());
  CHECK(seen_mode == "tanh");
  CHECK(seen_present == std::vector<bool>{false, true});
  args[0] = et_ops::tensor_list_value(elements, 2);
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::pick.out: argument 0 ('indices') must be an optional tensor list, got a tensor list");
  args[0] = et_ops::optional_tensor_list_value(elements, 2);
  args[1] = et_ops::int_value(1);
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::pick.out: argument 1 ('mode') must be a string, got an int");
}

TEST_CASE("a wrong argument is named by the operator, its position and its schema name", "[kit]") {
  static const et_ops::KernelLibrary library("kit_test", "1.0", {kEverything});
  const et_ops_kernel_fn fn = library.manifest().records[0].fn;
  float in = 0.0f;
  et_ops::Tensor t(et_ops::DType::Float32, &in, {1});
  std::vector<et_ops_value> args(15, et_ops::tensor_value(t));
  CHECK(std::string(et_ops::call_kernel(fn, args).message()) ==
        "kit_test::everything.out: argument 2 ('i') must be an int, got a tensor");
  std::vector<et_ops_value> too_few = {et_ops::tensor_value(t)};
  CHECK(std::string(et_ops::call_kernel(fn, too_few).message()) ==
        "kit_test::everything.out: expected 15 arguments, got 1");
}

TEST_CASE("a signature that does not match its schema is refused by register_kernels", "[kit]") {
  const auto counters_before = et_ops::counters();
  SECTION("a parameter of the wrong type") {
    const et_ops::KernelLibrary library(
        "mismatch", "1.0",
        {et_ops::kernel<&scale>("kit_test::fine.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)"),
         et_ops::kernel<&takes_int>("kit_test::scale.out(Tensor self, float factor, *, Tensor(a!) out) -> Tensor(a!)")});
    CHECK_FALSE(library.ok());
    const et_ops::RegistrationResult result = library.register_kernels();
    CHECK(result.status().code() == et_ops::StatusCode::Invalid);
    CHECK(result.status().message() ==
          "kernel library mismatch: kit_test::scale.out: argument 1 ('factor') is 'float' in the schema, which takes "
          "double, but the kernel's parameter 2 is int64_t");
    CHECK(library.manifest().record_count == 0);  // nothing of it can be registered
    CHECK(library.loadable_manifest() == nullptr);
    CHECK(std::string(library.loadable_error()) == result.status().message());
    CHECK_FALSE(et_ops::has_operator("kit_test::fine.out"));
  }
  SECTION("more schema arguments than parameters") {
    const et_ops::KernelLibrary library(
        "mismatch", "1.0", {et_ops::kernel<&one_tensor>("kit_test::two.out(Tensor self, *, Tensor(a!) out) -> ()")});
    CHECK(library.register_kernels().status().message() ==
          "kernel library mismatch: kit_test::two.out: the schema lists more arguments than the kernel takes: argument "
          "1 ('out') has no parameter");
  }
  SECTION("more parameters than schema arguments") {
    const et_ops::KernelLibrary library(
        "mismatch", "1.0", {et_ops::kernel<&scale>("kit_test::short.out(Tensor self, float factor) -> ()")});
    CHECK(library.register_kernels().status().message() ==
          "kernel library mismatch: kit_test::short.out: the kernel takes more parameters than the schema lists "
          "arguments (2): its parameter 3 (et_ops::TensorRef) has no argument");
  }
  SECTION("a schema type the kit does not map") {
    const et_ops::KernelLibrary library(
        "mismatch", "1.0", {et_ops::kernel<&scale>("kit_test::list.out(Tensor self, float[] factor, *, Tensor(a!) out) -> ()")});
    CHECK_THAT(library.register_kernels().status().message(),
               Catch::Contains("argument 1 ('factor') is 'float[]' in the schema, which takes no parameter type"));
  }
  SECTION("a schema that does not parse") {
    const et_ops::KernelLibrary library("mismatch", "1.0", {et_ops::kernel<&one_tensor>("kit_test::bad.out(Tensor)")});
    CHECK(library.register_kernels().status().message() ==
          "kernel library mismatch: kit_test::bad.out: the schema does not parse at offset 24: expected a space between "
          "the argument's type and its name (in \"kit_test::bad.out(Tensor)\")");
  }
  const auto counters_after = et_ops::counters();
  CHECK(counters_after.registered == counters_before.registered);
}

TEST_CASE("without a digest, every copy's fingerprints match no other copy's", "[kit][fingerprint]") {
  const et_ops::KernelLibrary first("kit_test", "1.0", {kEverything}, nullptr);
  const et_ops::KernelLibrary second("kit_test", "1.0", {kEverything}, nullptr);
  const std::string a = first.manifest().records[0].fingerprint;
  const std::string b = second.manifest().records[0].fingerprint;
  CHECK(a.rfind("unfingerprinted-", 0) == 0);
  CHECK(a != b);
  const et_ops::KernelLibrary third("kit_test", "1.0", {kEverything}, "same");
  const et_ops::KernelLibrary fourth("kit_test", "1.0", {kEverything}, "same");
  CHECK(std::string(third.manifest().records[0].fingerprint) == fourth.manifest().records[0].fingerprint);
}

TEST_CASE("register_kernels registers the library as one batch, idempotently", "[kit]") {
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::Fatal);
  static const et_ops::KernelLibrary library("kit_test", "1.0", {kEverything}, "digest");
  const et_ops::RegistrationResult first = library.register_kernels();
  REQUIRE(first.ok());
  CHECK(first->registered == 1);
  const et_ops::RegistrationResult again = library.register_kernels();
  CHECK(again->unchanged == 1);
  const et_ops::ResolvedKernel resolved = et_ops::lookup_kernel("kit_test::everything.out");
  CHECK(resolved.fn == library.manifest().records[0].fn);
  CHECK(resolved.argument_count == 15);
  CHECK(resolved.writes(14));
  CHECK_FALSE(resolved.writes(0));
  et_ops::unregister_library("/proc/self/exe");
  et_ops::clear_duplicate_policy();
}
