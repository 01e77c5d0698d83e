// The catalogue of et_ops kernel components. The operator lists come from
// each kernel library's own operators.def, so they cannot drift apart.
#include <algorithm>

#include "et_ops/diagnostics.h"
#include "et_ops/schema.h"

namespace et_ops {
namespace {

std::vector<std::string> quantized_operators() {
  return {
#define ET_OPS_OPERATOR(function, schema) std::string(schema_operator_name(schema)),
#include "kernels/quantized/operators.def"
#undef ET_OPS_OPERATOR
  };
}

std::vector<std::string> portable_operators() {
  return {
#define ET_OPS_OPERATOR(function, schema) std::string(schema_operator_name(schema)),
#include "kernels/portable/operators.def"
#undef ET_OPS_OPERATOR
  };
}

}  // namespace

const std::vector<ComponentInfo>& known_components() {
  static const std::vector<ComponentInfo> components = {
      {"kernels_portable", "libet_kernels_portable.so", "et-kernels-portable", "et_ops::kernels_portable",
       "et_ops/kernels/portable.h", "et_ops::kernels::portable::register_kernels", portable_operators()},
      {"kernels_quantized", "libet_kernels_quantized.so", "et-kernels-quantized", "et_ops::kernels_quantized",
       "et_ops/kernels/quantized.h", "et_ops::kernels::quantized::register_kernels", quantized_operators()},
  };
  return components;
}

const ComponentInfo* component_providing(std::string_view op) {
  for (const ComponentInfo& c : known_components())
    if (std::find(c.operators.begin(), c.operators.end(), op) != c.operators.end()) return &c;
  return nullptr;
}

}  // namespace et_ops
