// The project's kernel sets this et-ops can register (the table of kernel
// sets), and the options every command shares to set up the registry:
// --kernels, --policy, --load-library.
#ifndef ET_OPS_TOOLS_KERNEL_SETS_H
#define ET_OPS_TOOLS_KERNEL_SETS_H

#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "et_ops/registry.h"

namespace et_ops::tool {

struct RegistrySetup {
  std::vector<std::string> kernel_sets;  // names from the table of kernel sets: "portable", ...
  std::vector<std::string> libraries;    // --load-library paths
  std::optional<DuplicatePolicy> policy;
};

// The options RegistrySetup reads (--kernels, --policy, --load-library).
std::vector<OptionSpec> registry_setup_options();
// A command's own options followed by those.
std::vector<OptionSpec> with_registry_setup(std::vector<OptionSpec> options);

// Throws UsageError for an unknown kernel set or policy name.
RegistrySetup registry_setup_from(const Arguments& args);

// Applies the policy, registers the kernel sets, loads the libraries.
// Returns false after printing each error to stderr.
bool apply_registry_setup(const RegistrySetup& setup);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_KERNEL_SETS_H
