// The catalogue of the project's kernel components, from the table of
// kernel sets (src/kernels/kernel_sets.txt); each set's operators come from
// its own operators.def, so they cannot drift apart. A set NAME is the
// component kernels_NAME with the names the packaging gives it.
#include <algorithm>
#include <iterator>

#include "et_ops/diagnostics.h"
#include "et_ops/schema.h"

namespace et_ops {
namespace {

struct KernelSetRow {
  const char* name;
  const char* description;
  const char* const* schemas;
  std::size_t schema_count;
};

#include "registry/kernel_set_catalogue.inc"

ComponentInfo component_of(const KernelSetRow& row) {
  const std::string name = row.name;
  ComponentInfo c;
  c.name = "kernels_" + name;
  c.library = "libet_kernels_" + name + ".so";
  c.pkg_config = "et-kernels-" + name;
  c.cmake_target = "et_ops::kernels_" + name;
  c.header = "et_ops/kernels/" + name + ".h";
  c.register_function = "et_ops::kernels::" + name + "::register_kernels";
  for (std::size_t i = 0; i < row.schema_count; ++i) c.operators.emplace_back(schema_operator_name(row.schemas[i]));
  c.kernel_set = name;
  c.description = row.description;
  return c;
}

}  // namespace

const std::vector<ComponentInfo>& known_components() {
  static const std::vector<ComponentInfo> components = [] {
    std::vector<ComponentInfo> all;
    for (const KernelSetRow& row : kKernelSetRows) all.push_back(component_of(row));
    return all;
  }();
  return components;
}

const ComponentInfo* component_providing(std::string_view op) {
  for (const ComponentInfo& c : known_components())
    if (std::find(c.operators.begin(), c.operators.end(), op) != c.operators.end()) return &c;
  return nullptr;
}

}  // namespace et_ops
