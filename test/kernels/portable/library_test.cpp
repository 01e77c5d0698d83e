// The C-ABI face of the library: the manifest's records (names, schemas,
// fingerprints) and every kernel called through its record with
// et_ops::call_kernel, arguments in schema order with out arguments last.
#include <catch2/catch.hpp>
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "common/abi_arguments.h"
#include "et_ops/kernels/portable.h"
#include "et_ops/value.h"
#include "et_ops/version.h"
#include "test_util.h"

using et_ops::bool_value;
using et_ops::call_kernel;
using et_ops::double_value;
using et_ops::int_list_value;
using et_ops::int_value;
using et_ops::none_value;
using et_ops::tensor_value;

namespace {

struct OperatorRow {
  std::string name;
  std::string schema;
};

const std::vector<OperatorRow>& expected_operators() {
  static const std::vector<OperatorRow> rows = {
#define ET_OPS_OPERATOR(function, schema) {std::string(schema).substr(0, std::string(schema).find('(')), schema},
#include "kernels/portable/operators.def"
#undef ET_OPS_OPERATOR
  };
  return rows;
}

et_ops_kernel_fn kernel(const char* op) {
  const et_ops_manifest& m = portable::manifest();
  for (std::size_t i = 0; i < m.record_count; ++i)
    if (std::strcmp(m.records[i].op, op) == 0) return m.records[i].fn;
  FAIL("no record for " << op);
  return nullptr;
}

template <typename T>
et_ops_value tensor_arg(Owned<T>& t) {
  return tensor_value(t.raw());
}

et_ops_value list_arg(const std::vector<int64_t>& values) {
  return int_list_value(values.data(), static_cast<int64_t>(values.size()));
}

}  // namespace

TEST_CASE("manifest: one fallback record per operator of operators.def", "[portable][abi]") {
  const et_ops_manifest& m = portable::manifest();
  CHECK(m.abi_version == ET_OPS_ABI_VERSION);
  CHECK(m.record_size == sizeof(et_ops_kernel_record));
  CHECK(std::string(m.component) == "kernels_portable");
  CHECK(std::string(m.component) == portable::kComponent);
  CHECK(std::string(m.version) == ET_OPS_VERSION);
  REQUIRE(m.record_count == expected_operators().size());
  std::set<std::string> fingerprints;
  for (std::size_t i = 0; i < m.record_count; ++i) {
    const et_ops_kernel_record& r = m.records[i];
    CHECK(std::string(r.op) == expected_operators()[i].name);
    CHECK(std::string(r.schema) == expected_operators()[i].schema);
    CHECK(std::string(r.key).empty());
    CHECK(r.fn != nullptr);
    const std::string fingerprint = r.fingerprint;
    CHECK(fingerprint.size() == 32);
    CHECK(fingerprint.find_first_not_of("0123456789abcdef") == std::string::npos);
    fingerprints.insert(fingerprint);
  }
  CHECK(fingerprints.size() == m.record_count);
}

TEST_CASE("abi: every kernel takes its schema's arguments, kinds and names", "[portable][abi]") {
  et_ops::test::check_every_kernel_counts_and_names_its_arguments(portable::manifest());
}

TEST_CASE("manifest: the loadable-library entry point returns it", "[portable][abi]") {
  void* symbol = dlsym(RTLD_DEFAULT, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT);
  REQUIRE(symbol != nullptr);
  auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(symbol);
  CHECK(entry() == &portable::manifest());
}

TEST_CASE("abi: add.out takes alpha as an int or a double", "[portable][abi]") {
  Owned<float> a({2}, {1, 2});
  Owned<float> b({2}, {10, 20});
  Owned<float> out({2}, {0, 0});
  std::vector<et_ops_value> args = {tensor_arg(a), tensor_arg(b), int_value(2), tensor_arg(out)};
  auto ctx = call_kernel(kernel("aten::add.out"), args);
  REQUIRE(ctx.ok());
  CHECK(out.values == std::vector<float>{21, 42});
  args[2] = double_value(0.5);
  ctx = call_kernel(kernel("aten::add.out"), args);
  REQUIRE(ctx.ok());
  CHECK(out.values == std::vector<float>{6, 12});
  SECTION("a bool alpha is rejected") {
    args[2] = bool_value(true);
    ctx = call_kernel(kernel("aten::add.out"), args);
    CHECK_ERROR(ctx, "aten::add.out: argument 2 ('alpha') must be a double, got a bool");
  }
  SECTION("a missing argument") {
    args.pop_back();
    ctx = call_kernel(kernel("aten::add.out"), args);
    CHECK_ERROR(ctx, "aten::add.out: expected 4 arguments, got 3");
  }
  SECTION("an int where a tensor belongs") {
    args[1] = int_value(3);
    ctx = call_kernel(kernel("aten::add.out"), args);
    CHECK_ERROR(ctx, "argument 1 ('other') must be a tensor, got an int");
  }
  SECTION("kernel errors come through the C context") {
    Owned<float> wrong({3}, {0, 0, 0});
    args[3] = tensor_arg(wrong);
    ctx = call_kernel(kernel("aten::add.out"), args);
    CHECK_ERROR(ctx, "aten::add.out: out has shape [3], expected [2]");
  }
}

TEST_CASE("abi: mul, mm, addmm and relu", "[portable][abi]") {
  Owned<float> a({2, 2}, {1, 2, 3, 4});
  Owned<float> b({2, 2}, {5, 6, 7, 8});
  Owned<float> bias({2}, {1, -1});
  Owned<float> out({2, 2}, {0, 0, 0, 0});
  std::vector<et_ops_value> mul = {tensor_arg(a), tensor_arg(b), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::mul.out"), mul).ok());
  CHECK(out.values == std::vector<float>{5, 12, 21, 32});
  std::vector<et_ops_value> mm = {tensor_arg(a), tensor_arg(b), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::mm.out"), mm).ok());
  CHECK(out.values == std::vector<float>{19, 22, 43, 50});
  std::vector<et_ops_value> addmm = {tensor_arg(bias), tensor_arg(a), tensor_arg(b),
                                     int_value(2),     double_value(0.5), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::addmm.out"), addmm).ok());
  CHECK(out.values == std::vector<float>{11.5f, 9, 23.5f, 23});
  Owned<float> negative({2, 2}, {-1, 2, -3, 4});
  std::vector<et_ops_value> relu = {tensor_arg(negative), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::relu.out"), relu).ok());
  CHECK(out.values == std::vector<float>{0, 2, 0, 4});
}

TEST_CASE("abi: linear with a bias and with none", "[portable][abi]") {
  Owned<float> x({1, 2}, {1, 2});
  Owned<float> w({3, 2}, {1, 0, 0, 1, 1, 1});
  Owned<float> bias({3}, {10, 20, 30});
  Owned<float> out({1, 3}, {0, 0, 0});
  std::vector<et_ops_value> args = {tensor_arg(x), tensor_arg(w), tensor_arg(bias), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::linear.out"), args).ok());
  CHECK(out.values == std::vector<float>{11, 22, 33});
  args[2] = none_value();
  REQUIRE(call_kernel(kernel("aten::linear.out"), args).ok());
  CHECK(out.values == std::vector<float>{1, 2, 3});
}

TEST_CASE("abi: view_copy and permute_copy take int lists", "[portable][abi]") {
  Owned<int32_t> x({2, 3}, {1, 2, 3, 4, 5, 6});
  Owned<int32_t> flat({6}, Owned<int32_t>::filled({6}, 0));
  Owned<int32_t> transposed({3, 2}, Owned<int32_t>::filled({3, 2}, 0));
  const std::vector<int64_t> size = {-1};
  const std::vector<int64_t> dims = {1, 0};
  std::vector<et_ops_value> view = {tensor_arg(x), list_arg(size), tensor_arg(flat)};
  REQUIRE(call_kernel(kernel("aten::view_copy.out"), view).ok());
  CHECK(flat.values == std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  std::vector<et_ops_value> permute = {tensor_arg(x), list_arg(dims), tensor_arg(transposed)};
  REQUIRE(call_kernel(kernel("aten::permute_copy.out"), permute).ok());
  CHECK(transposed.values == std::vector<int32_t>{1, 4, 2, 5, 3, 6});
  permute[1] = int_list_value(nullptr, 2);
  const auto ctx = call_kernel(kernel("aten::permute_copy.out"), permute);
  CHECK_ERROR(ctx, "argument 1 ('dims') is a malformed int list");
}

TEST_CASE("abi: convolution with and without a bias", "[portable][abi]") {
  Owned<float> x({1, 1, 2, 2}, {1, 2, 3, 4});
  Owned<float> w({2, 1, 1, 1}, {1, -1});
  Owned<float> bias({2}, {10, 20});
  Owned<float> out({1, 2, 2, 2}, Owned<float>::filled({1, 2, 2, 2}, 0));
  const std::vector<int64_t> one = {1};
  const std::vector<int64_t> zeros = {0, 0};
  std::vector<et_ops_value> args = {tensor_arg(x),  tensor_arg(w),   none_value(),   list_arg(one),
                                    list_arg(zeros), list_arg(one), bool_value(false), list_arg(zeros),
                                    int_value(1),    tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::convolution.out"), args).ok());
  CHECK(out.values == std::vector<float>{1, 2, 3, 4, -1, -2, -3, -4});
  args[2] = tensor_arg(bias);
  REQUIRE(call_kernel(kernel("aten::convolution.out"), args).ok());
  CHECK(out.values == std::vector<float>{11, 12, 13, 14, 19, 18, 17, 16});
  args[6] = bool_value(true);
  const auto ctx = call_kernel(kernel("aten::convolution.out"), args);
  CHECK_ERROR(ctx, "transposed convolution");
}

TEST_CASE("abi: max_pool2d_with_indices writes both outputs; softmax", "[portable][abi]") {
  const std::vector<int64_t> kernel_size = {2, 1};
  const std::vector<int64_t> no_stride = {};
  const std::vector<int64_t> zero = {0};
  const std::vector<int64_t> one = {1};
  Owned<float> planes({2, 2, 2}, {1, 4, 3, 2, 5, 7, 6, 0});
  Owned<float> pooled({2, 1, 2}, {0, 0, 0, 0});
  Owned<int64_t> where({2, 1, 2}, {0, 0, 0, 0});
  std::vector<et_ops_value> args = {tensor_arg(planes), list_arg(kernel_size), list_arg(no_stride), list_arg(zero),
                                    list_arg(one),      bool_value(false),     tensor_arg(pooled),  tensor_arg(where)};
  REQUIRE(call_kernel(kernel("aten::max_pool2d_with_indices.out"), args).ok());
  CHECK(pooled.values == std::vector<float>{3, 4, 6, 7});
  CHECK(where.values == std::vector<int64_t>{2, 1, 2, 1});

  Owned<float> logits({2}, {0, 0});
  Owned<float> probabilities({2}, {0, 0});
  std::vector<et_ops_value> softmax = {tensor_arg(logits), int_value(-1), bool_value(false), tensor_arg(probabilities)};
  REQUIRE(call_kernel(kernel("aten::_softmax.out"), softmax).ok());
  CHECK(probabilities.values == std::vector<float>{0.5f, 0.5f});
  softmax[1] = double_value(0);
  const auto ctx = call_kernel(kernel("aten::_softmax.out"), softmax);
  CHECK_ERROR(ctx, "argument 1 ('dim') must be an int, got a double");
}

TEST_CASE("abi: an optional argument is a none value or the value itself", "[portable][abi]") {
  Owned<float> x({4}, {-2, -0.5f, 0.5f, 2});
  Owned<float> out({4}, {0, 0, 0, 0});
  SECTION("clamp: Scalar? as none, int and double") {
    std::vector<et_ops_value> args = {tensor_arg(x), none_value(), double_value(1.5), tensor_arg(out)};
    REQUIRE(call_kernel(kernel("aten::clamp.out"), args).ok());
    CHECK(out.values == std::vector<float>{-2, -0.5f, 0.5f, 1.5f});
    args[1] = int_value(0);
    args[2] = none_value();
    REQUIRE(call_kernel(kernel("aten::clamp.out"), args).ok());
    CHECK(out.values == std::vector<float>{0, 0, 0.5f, 2});
  }
  SECTION("mean: int[1]? and ScalarType?") {
    Owned<float> m({}, {0});
    std::vector<et_ops_value> args = {tensor_arg(x), none_value(), bool_value(false), none_value(), tensor_arg(m)};
    REQUIRE(call_kernel(kernel("aten::mean.out"), args).ok());
    CHECK(m.values[0] == 0);
    const std::vector<int64_t> dims = {0};
    args[1] = list_arg(dims);
    args[3] = et_ops::scalar_type_value(et_ops::DType::Float32);
    REQUIRE(call_kernel(kernel("aten::mean.out"), args).ok());
    args[3] = et_ops::scalar_type_value(et_ops::DType::Float64);
    const auto ctx = call_kernel(kernel("aten::mean.out"), args);
    CHECK_ERROR(ctx, "aten::mean.out: out must be float64, got float32");
  }
  SECTION("slice_copy: SymInt? start and end") {
    Owned<float> two({2}, {0, 0});
    std::vector<et_ops_value> args = {tensor_arg(x), int_value(0), none_value(), int_value(2), int_value(1),
                                      tensor_arg(two)};
    REQUIRE(call_kernel(kernel("aten::slice_copy.Tensor_out"), args).ok());
    CHECK(two.values == std::vector<float>{-2, -0.5f});
    args[2] = int_value(-2);
    args[3] = none_value();
    REQUIRE(call_kernel(kernel("aten::slice_copy.Tensor_out"), args).ok());
    CHECK(two.values == std::vector<float>{0.5f, 2});
    args[2] = double_value(1.0);
    const auto ctx = call_kernel(kernel("aten::slice_copy.Tensor_out"), args);
    CHECK_ERROR(ctx, "argument 2 ('start') must be an int, got a double");
  }
  SECTION("avg_pool2d: int? divisor_override; upsample_nearest2d: float? scales") {
    Owned<float> planes({1, 1, 2, 2}, {1, 2, 3, 4});
    Owned<float> pooled({1, 1, 1, 1}, {0});
    const std::vector<int64_t> two = {2};
    const std::vector<int64_t> none = {};
    const std::vector<int64_t> zero = {0};
    std::vector<et_ops_value> args = {tensor_arg(planes), list_arg(two),     list_arg(none), list_arg(zero),
                                      bool_value(false),  bool_value(true), none_value(),   tensor_arg(pooled)};
    REQUIRE(call_kernel(kernel("aten::avg_pool2d.out"), args).ok());
    CHECK(pooled.values[0] == 2.5f);
    args[6] = int_value(5);
    REQUIRE(call_kernel(kernel("aten::avg_pool2d.out"), args).ok());
    CHECK(pooled.values[0] == 2);
    Owned<float> wide({1, 1, 2, 3}, Owned<float>::filled({1, 1, 2, 3}, 0));
    const std::vector<int64_t> size = {2, 3};
    std::vector<et_ops_value> up = {tensor_arg(planes), list_arg(size), none_value(), double_value(0.5),
                                    tensor_arg(wide)};
    REQUIRE(call_kernel(kernel("aten::upsample_nearest2d.out"), up).ok());
    CHECK(wide.values == std::vector<float>{1, 2, 2, 3, 4, 4});  // column index floor(o * 2), clamped
    up[2] = int_value(1);  // a float argument accepts an int value
    REQUIRE(call_kernel(kernel("aten::upsample_nearest2d.out"), up).ok());
  }
}

TEST_CASE("abi: cat takes a tensor list", "[portable][abi]") {
  Owned<int64_t> a({1, 2}, {1, 2});
  Owned<int64_t> b({2, 2}, {3, 4, 5, 6});
  Owned<int64_t> out({3, 2}, Owned<int64_t>::filled({3, 2}, 0));
  et_ops_tensor* const tensors[] = {a.raw(), b.raw()};
  std::vector<et_ops_value> args = {et_ops::tensor_list_value(tensors, 2), int_value(0), tensor_arg(out)};
  REQUIRE(call_kernel(kernel("aten::cat.out"), args).ok());
  CHECK(out.values == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
  et_ops_tensor* const with_null[] = {a.raw(), nullptr};
  args[0] = et_ops::tensor_list_value(with_null, 2);
  auto ctx = call_kernel(kernel("aten::cat.out"), args);
  CHECK_ERROR(ctx, "aten::cat.out: argument 0 ('tensors') holds a null tensor at 1");
  args[0] = tensor_arg(a);
  ctx = call_kernel(kernel("aten::cat.out"), args);
  CHECK_ERROR(ctx, "argument 0 ('tensors') must be a tensor list, got a tensor");
}
