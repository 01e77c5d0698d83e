// The schema reader (et_ops/schema.h): names, argument kinds, written
// arguments, defaults, and errors that say where the text goes wrong.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "et_ops/schema.h"

using et_ops::ArgumentKind;
using et_ops::SchemaArgument;
using et_ops::SchemaReader;

namespace {

std::vector<SchemaArgument> arguments_of(const char* schema) {
  SchemaReader reader(schema);
  std::vector<SchemaArgument> arguments;
  SchemaArgument a;
  while (reader.next(a)) arguments.push_back(a);
  INFO(schema << ": " << (reader.error() ? reader.error() : ""));
  REQUIRE(reader.ok());
  return arguments;
}

std::string error_of(const char* schema) {
  SchemaReader reader(schema);
  SchemaArgument a;
  while (reader.next(a)) {
  }
  return reader.ok() ? "" : reader.error();
}

}  // namespace

TEST_CASE("every supported type maps to its kind", "[schema]") {
  const auto a = arguments_of(
      "ns::op.out(Tensor a, Tensor? b, Tensor[] c, int d, SymInt e, int? f, SymInt? g, int[] h, int[2] i, "
      "SymInt[] j, SymInt[3] k, int[]? l, int[2]? m, float n, float? o, bool p, bool? q, Scalar r, Scalar? s, "
      "ScalarType t, ScalarType? u, str v, Tensor?[] w, float[] x, *, Tensor(a!) out) -> Tensor(a!)");
  const ArgumentKind expected[] = {
      ArgumentKind::Tensor,          ArgumentKind::OptionalTensor, ArgumentKind::TensorList,
      ArgumentKind::Int,             ArgumentKind::Int,            ArgumentKind::OptionalInt,
      ArgumentKind::OptionalInt,     ArgumentKind::IntList,        ArgumentKind::IntList,
      ArgumentKind::IntList,         ArgumentKind::IntList,        ArgumentKind::OptionalIntList,
      ArgumentKind::OptionalIntList, ArgumentKind::Float,          ArgumentKind::OptionalFloat,
      ArgumentKind::Bool,            ArgumentKind::OptionalBool,   ArgumentKind::Scalar,
      ArgumentKind::OptionalScalar,  ArgumentKind::ScalarType,     ArgumentKind::OptionalScalarType,
      ArgumentKind::String,          ArgumentKind::OptionalTensorList, ArgumentKind::Other,
      ArgumentKind::Tensor};
  REQUIRE(a.size() == std::size(expected));
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("argument " << i << " " << std::string(a[i].type));
    CHECK(a[i].kind == expected[i]);
  }
  CHECK(a.back().written);
  CHECK(a.back().keyword_only);
  CHECK_FALSE(a.front().keyword_only);
  CHECK(a.back().name == "out");
  CHECK(a.back().type == "Tensor(a!)");
}

TEST_CASE("defaults may hold commas, brackets and strings", "[schema]") {
  const auto a = arguments_of(
      "aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=[0, 0], "
      "str mode=\"a, b\", bool ceil_mode=False, *, Tensor(a!) out, Tensor(b!) indices) -> (Tensor(a!), Tensor(b!))");
  REQUIRE(a.size() == 8);
  CHECK(a[2].default_value == "[]");
  CHECK(a[3].default_value == "[0, 0]");
  CHECK(a[4].default_value == "\"a, b\"");
  CHECK(a[5].has_default);
  CHECK_FALSE(a[1].has_default);
  CHECK(a[6].written);
  CHECK(a[7].written);
  CHECK(a[7].name == "indices");
}

TEST_CASE("the summary counts the arguments and marks the written ones", "[schema]") {
  constexpr auto s = et_ops::summarize_schema("ns::op.out(Tensor x, int n=1, *, Tensor(a!) y, Tensor(b!) z) -> ()");
  static_assert(s.ok() && s.argument_count == 4, "the reader works at compile time");
  CHECK(s.written == 0b1100);
  CHECK_FALSE(s.writes(0));
  CHECK(s.writes(3));
  CHECK(et_ops::schema_operator_name("acme::scale.out(Tensor self) -> Tensor") == "acme::scale.out");
  CHECK(et_ops::summarize_schema("ns::op() -> ()").argument_count == 0);
}

TEST_CASE("malformed schemas are errors that say what was expected", "[schema]") {
  CHECK(error_of("no_namespace(Tensor a) -> Tensor") == "expected '::' after the namespace");
  CHECK(error_of("ns::op Tensor a) -> Tensor") == "expected '(' after the operator name");
  CHECK(error_of("ns::op(Tensor a -> Tensor") == "expected ',' or ')' after an argument");
  CHECK(error_of("ns::op(Tensor) -> Tensor") == "expected a space between the argument's type and its name");
  CHECK(error_of("ns::op(Tensor a)") == "expected '->' after the argument list");
  CHECK(error_of("ns::op(Tensor a) ->") == "expected the return type after '->'");
  CHECK(error_of("ns::op(Tensor a, *) -> ()") == "the '*' marker is the last argument");
  CHECK(error_of("ns::op(int x=) -> ()") == "expected a default value after '='");
  CHECK(error_of("ns::op(...) -> ()") == "variadic arguments ('...') are not supported");
  CHECK(error_of("s") == "expected '::' after the namespace");
  SchemaReader reader("ns::op(Tensor a,, Tensor b) -> ()");
  SchemaArgument a;
  while (reader.next(a)) {
  }
  CHECK(reader.error_offset() == 16);
}
