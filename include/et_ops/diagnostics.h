// Missing-operator diagnostics: which operators a program needs that the
// process has not registered, which et_ops component provides each, and a
// message that says how to add it. The catalogue of components is built
// into libet_ops.so, so it answers even for components that are not linked.
#ifndef ET_OPS_DIAGNOSTICS_H
#define ET_OPS_DIAGNOSTICS_H

#include <string>
#include <string_view>
#include <vector>

#include "et_ops/export.h"

namespace et_ops {

struct ComponentInfo {
  std::string name;              // "kernels_quantized"
  std::string library;           // "libet_kernels_quantized.so"
  std::string pkg_config;        // "et-kernels-quantized"
  std::string cmake_target;      // "et_ops::kernels_quantized"
  std::string header;            // "et_ops/kernels/quantized.h"
  std::string register_function; // "et_ops::kernels::quantized::register_kernels"
  std::vector<std::string> operators;
  std::string kernel_set;   // "quantized": the name et-ops --kernels and -Dkernel_sets use
  std::string description;  // "all quantized_decomposed overloads"
};

// Every kernel component of et_ops (the table of kernel sets), with its
// operators, whether this installation built it or not.
ET_OPS_API const std::vector<ComponentInfo>& known_components();

// The component that provides `op`, or nullptr if no et_ops component does.
ET_OPS_API const ComponentInfo* component_providing(std::string_view op);

// The four ways to add a component: pkg-config, Meson, CMake and C++ lines.
ET_OPS_API std::string how_to_add(const ComponentInfo& component);

struct MissingOperator {
  std::string op;
  const ComponentInfo* component = nullptr;  // nullptr: no et_ops component provides it
};

struct MissingOperatorReport {
  std::vector<MissingOperator> missing;
  std::string message;  // empty when nothing is missing
  bool ok() const { return missing.empty(); }
};

// Checks `operators` (duplicates allowed) against the registry.
ET_OPS_API MissingOperatorReport diagnose_missing_operators(const std::vector<std::string>& operators,
                                                            std::string_view program = {});

}  // namespace et_ops

#endif  // ET_OPS_DIAGNOSTICS_H
