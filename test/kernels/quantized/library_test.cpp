// The C-ABI face of libet_kernels_quantized.so: the manifest holds the
// operators of operators.def with their schemas and fingerprints, and every
// C-ABI kernel unpacks exactly its schema's arguments.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "common/abi_arguments.h"
#include "et_ops/kernels/quantized.h"

namespace quantized = et_ops::kernels::quantized;

TEST_CASE("manifest: the operators of operators.def, each with its schema and a fingerprint") {
  const std::string schemas[] = {
#define ET_OPS_OPERATOR(function, schema) schema,
#include "operators.def"
#undef ET_OPS_OPERATOR
  };
  const et_ops_manifest& m = quantized::manifest();
  REQUIRE(m.record_count == std::size(schemas));
  std::set<std::string> fingerprints;
  for (std::size_t i = 0; i < m.record_count; ++i) {
    // The operator name is the schema's text before its argument list.
    const et_ops_kernel_record& record = *et_ops_manifest_record(&m, i);
    CHECK(std::string(record.op) == schemas[i].substr(0, schemas[i].find('(')));
    CHECK(std::string(record.schema) == schemas[i]);
    CHECK(std::string(record.key).empty());
    fingerprints.insert(record.fingerprint);
  }
  CHECK(fingerprints.size() == std::size(schemas));  // the operator name is part of each
}

TEST_CASE("abi: every kernel takes its schema's arguments, kinds and names") {
  et_ops::test::check_every_kernel_counts_and_names_its_arguments(quantized::manifest());
}
