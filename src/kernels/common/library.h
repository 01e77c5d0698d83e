// Builds a kernel library's manifest from its operator table, with one
// fingerprint per operator (library digest + operator name).
#ifndef ET_OPS_SRC_KERNELS_COMMON_LIBRARY_H
#define ET_OPS_SRC_KERNELS_COMMON_LIBRARY_H

#include <cstddef>
#include <string>
#include <vector>

#include "et_ops/abi.h"
#include "et_ops/fingerprint.h"

namespace et_ops::kernels::detail {

struct OperatorEntry {
  const char* name;
  const char* schema;
  et_ops_kernel_fn fn;
};

// The two X-macro expansions of a library's operators.def row
// ET_OPS_OPERATOR(function, name, schema): a type carrying the operator's
// name and schema (for messages), and the operator table entry whose C-ABI
// kernel unpacks its arguments into the typed entry point `function`
// (abi_kernel, common/args.h).
#define ET_OPS_DETAIL_OPERATOR_TYPE(function, name, schema) \
  struct function##_operator {                              \
    static constexpr const char* kName = name;              \
    static constexpr const char* kSchema = schema;          \
  };
#define ET_OPS_DETAIL_OPERATOR_ENTRY(function, name, schema) \
  {name, schema, &::et_ops::kernels::detail::abi_kernel<function##_operator, &function>},

class StaticManifest {
 public:
  StaticManifest(const char* component, const char* version, const char* digest, const OperatorEntry* ops,
                 std::size_t count) {
    fingerprints_.reserve(count);
    records_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      fingerprints_.push_back(operator_fingerprint(digest, ops[i].name));
      records_.push_back(et_ops_kernel_record{ops[i].name, "", ops[i].fn, ops[i].schema, fingerprints_.back().c_str()});
    }
    manifest_ = et_ops_manifest{ET_OPS_ABI_VERSION, sizeof(et_ops_kernel_record), component, version,
                                records_.data(), records_.size()};
  }
  StaticManifest(const StaticManifest&) = delete;
  StaticManifest& operator=(const StaticManifest&) = delete;

  const et_ops_manifest& manifest() const { return manifest_; }

 private:
  std::vector<std::string> fingerprints_;
  std::vector<et_ops_kernel_record> records_;
  et_ops_manifest manifest_{};
};

}  // namespace et_ops::kernels::detail

#endif  // ET_OPS_SRC_KERNELS_COMMON_LIBRARY_H
