// Registering the project's kernel sets and --load-library libraries.
#include "kernel_sets.h"

#include <fmt/format.h>

#include "et_ops/library_loader.h"
#if ET_OPS_TOOL_HAVE_PORTABLE
#include "et_ops/kernels/portable.h"
#endif
#if ET_OPS_TOOL_HAVE_QUANTIZED
#include "et_ops/kernels/quantized.h"
#endif

namespace et_ops::tool {
namespace {

struct KernelSet {
  const char* name;
  const char* component;
  RegistrationResult (*register_kernels)();  // null: not built into this et-ops
};

const KernelSet kKernelSets[] = {
#if ET_OPS_TOOL_HAVE_PORTABLE
    {"portable", "kernels_portable", &et_ops::kernels::portable::register_kernels},
#else
    {"portable", "kernels_portable", nullptr},
#endif
#if ET_OPS_TOOL_HAVE_QUANTIZED
    {"quantized", "kernels_quantized", &et_ops::kernels::quantized::register_kernels},
#else
    {"quantized", "kernels_quantized", nullptr},
#endif
};

const KernelSet* find_kernel_set(const std::string& name) {
  for (const KernelSet& set : kKernelSets)
    if (name == set.name) return &set;
  return nullptr;
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) items.push_back(std::move(item));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

std::vector<std::string> parse_kernel_sets(const std::optional<std::string>& list) {
  std::vector<std::string> names;
  if (!list) {  // default: every set this et-ops was built with
    for (const KernelSet& set : kKernelSets)
      if (set.register_kernels) names.push_back(set.name);
    return names;
  }
  for (const std::string& name : split_list(*list)) {
    if (find_kernel_set(name) == nullptr)
      throw UsageError(fmt::format("--kernels: unknown kernel set '{}' (known: portable, quantized)", name));
    names.push_back(name);
  }
  return names;
}

bool register_kernel_set(const std::string& name) {
  const KernelSet& set = *find_kernel_set(name);
  if (set.register_kernels == nullptr) {
    fmt::print(stderr, "et-ops: kernel set '{}' ({}) was not built into this et-ops\n", set.name, set.component);
    return false;
  }
  const RegistrationResult result = set.register_kernels();
  if (!result) fmt::print(stderr, "et-ops: registering {} failed: {}\n", set.component, result.message());
  return result.ok();
}

// Libraries loaded with --load-library stay loaded and registered while
// et-ops runs.
std::vector<LoadedKernelLibrary>& loaded_libraries() {
  static std::vector<LoadedKernelLibrary> libraries;
  return libraries;
}

}  // namespace

std::set<std::string> registry_setup_options() { return {"--kernels", "--policy", "--load-library"}; }

RegistrySetup registry_setup_from(const Arguments& args) {
  RegistrySetup setup;
  setup.kernel_sets = parse_kernel_sets(args.value("--kernels"));
  setup.libraries = args.values("--load-library");
  if (auto policy = args.value("--policy")) {
    setup.policy = parse_duplicate_policy(*policy);
    if (!setup.policy)
      throw UsageError(fmt::format("--policy: unknown policy '{}' (valid: fatal, first-wins)", *policy));
  }
  return setup;
}

bool apply_registry_setup(const RegistrySetup& setup) {
  if (setup.policy) set_duplicate_policy(*setup.policy);
  bool ok = true;
  for (const std::string& name : setup.kernel_sets) ok = register_kernel_set(name) && ok;
  for (const std::string& path : setup.libraries) {
    LoadedKernelLibrary library = load_kernel_library(path);
    if (!library) {
      fmt::print(stderr, "et-ops: {}\n", library.message());
      ok = false;
    } else {
      loaded_libraries().push_back(std::move(library));
    }
  }
  return ok;
}

}  // namespace et_ops::tool
