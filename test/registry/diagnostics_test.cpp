// Missing-operator diagnostics: all missing operators, the component of
// each, "packaging, not the model", and the four lines that add it.
#include <catch2/catch.hpp>

#include <iterator>

#include "et_ops/diagnostics.h"
#include "et_ops/registry.h"

namespace {
// One per row of the quantized set's operators.def.
constexpr const char* kQuantizedSchemas[] = {
#define ET_OPS_OPERATOR(function, schema) schema,
#include "kernels/quantized/operators.def"
#undef ET_OPS_OPERATOR
};
}  // namespace

TEST_CASE("the catalogue knows every kernel component and its operators", "[diagnostics]") {
  const auto& components = et_ops::known_components();
  REQUIRE(components.size() == 3);  // src/kernels/kernel_sets.txt: portable, quantized, xnnpack
  const auto* quantized = et_ops::component_providing("quantized_decomposed::quantize_per_tensor.out");
  REQUIRE(quantized != nullptr);
  CHECK(quantized->name == "kernels_quantized");
  CHECK(quantized->operators.size() == std::size(kQuantizedSchemas));
  const auto* portable = et_ops::component_providing("aten::mm.out");
  REQUIRE(portable != nullptr);
  CHECK(portable->pkg_config == "et-kernels-portable");
  const auto* xnnpack = et_ops::component_providing("et_xnnpack::conv2d.out");
  REQUIRE(xnnpack != nullptr);
  CHECK(xnnpack->name == "kernels_xnnpack");
  CHECK(xnnpack->pkg_config == "et-kernels-xnnpack");
  CHECK(et_ops::component_providing("nobody::nothing.out") == nullptr);
}

TEST_CASE("a report lists every missing operator with its component and how to add it", "[diagnostics]") {
  auto report = et_ops::diagnose_missing_operators(
      {"quantized_decomposed::quantize_per_tensor.out", "aten::mm.out", "quantized_decomposed::add.out",
       "quantized_decomposed::add.out", "vendor::secret.out"},
      "qmlp");
  REQUIRE_FALSE(report.ok());
  CHECK(report.missing.size() == 4);  // duplicates are reported once
  const std::string& m = report.message;
  CHECK(m.find("Program 'qmlp' needs 4 operator(s)") != std::string::npos);
  for (const char* op : {"quantized_decomposed::quantize_per_tensor.out", "aten::mm.out",
                         "quantized_decomposed::add.out", "vendor::secret.out"})
    CHECK(m.find(op) != std::string::npos);
  CHECK(m.find("packaging problem, not a problem with the model") != std::string::npos);
  CHECK(m.find("pkg-config --cflags --libs et-kernels-quantized") != std::string::npos);
  CHECK(m.find("dependency('et-kernels-quantized')") != std::string::npos);
  CHECK(m.find("find_package(et_ops REQUIRED COMPONENTS kernels_quantized)") != std::string::npos);
  CHECK(m.find("et_ops::kernels_quantized") != std::string::npos);
  CHECK(m.find("et_ops::kernels::quantized::register_kernels();") != std::string::npos);
  CHECK(m.find("#include <et_ops/kernels/portable.h>") != std::string::npos);
  CHECK(m.find("not provided by any et_ops component") != std::string::npos);
  CHECK(m.find("--load-library") != std::string::npos);
}

TEST_CASE("nothing missing gives an empty report", "[diagnostics]") {
  void (*fn)(et_ops_kernel_context*, et_ops_value* const*, std::size_t) = [](et_ops_kernel_context*,
                                                                             et_ops_value* const*, std::size_t) {};
  et_ops_kernel_record record{"diag::present.out", "", fn, "s", "f"};
  et_ops_manifest m{ET_OPS_ABI_VERSION, sizeof record, "diag", "1", &record, 1};
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::Fatal);
  REQUIRE(et_ops::register_manifest(m).ok());
  auto report = et_ops::diagnose_missing_operators({"diag::present.out"});
  CHECK(report.ok());
  CHECK(report.message.empty());
  et_ops::unregister_library("/proc/self/exe");
  et_ops::clear_duplicate_policy();
}
