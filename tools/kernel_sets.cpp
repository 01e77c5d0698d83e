// Registering the project's kernel sets and --load-library libraries.
#include "kernel_sets.h"

#include <fmt/format.h>

#include <utility>

#include "built_kernel_sets.h"
#include "et_ops/diagnostics.h"
#include "et_ops/library_loader.h"

namespace et_ops::tool {
namespace {

// The kernel sets built into this et-ops (the table of kernel sets, as
// this build configured it); a null row ends the list.
struct BuiltKernelSet {
  const char* name;
  RegistrationResult (*register_kernels)();
};
#define ET_OPS_TOOL_BUILT_SET(set) {#set, &::et_ops::kernels::set::register_kernels},
const BuiltKernelSet kBuiltKernelSets[] = {ET_OPS_BUILT_KERNEL_SETS(ET_OPS_TOOL_BUILT_SET){nullptr, nullptr}};
#undef ET_OPS_TOOL_BUILT_SET

const BuiltKernelSet* find_built(const std::string& name) {
  for (const BuiltKernelSet* set = kBuiltKernelSets; set->name != nullptr; ++set)
    if (name == set->name) return set;
  return nullptr;
}

const ComponentInfo* find_known(const std::string& name) {
  for (const ComponentInfo& c : known_components())
    if (c.kernel_set == name) return &c;
  return nullptr;
}

std::string known_names() {
  std::vector<std::string> names;
  for (const ComponentInfo& c : known_components()) names.push_back(c.kernel_set);
  return fmt::format("{}", fmt::join(names, ", "));
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
    for (const BuiltKernelSet* set = kBuiltKernelSets; set->name != nullptr; ++set) names.push_back(set->name);
    return names;
  }
  for (const std::string& name : split_list(*list)) {
    if (find_known(name) == nullptr)
      throw UsageError(fmt::format("--kernels: unknown kernel set '{}' (known: {})", name, known_names()));
    names.push_back(name);
  }
  return names;
}

bool register_kernel_set(const std::string& name) {
  const ComponentInfo& component = *find_known(name);
  const BuiltKernelSet* set = find_built(name);
  if (set == nullptr) {
    fmt::print(stderr, "et-ops: kernel set '{}' ({}) was not built into this et-ops\n", name, component.name);
    return false;
  }
  const RegistrationResult result = set->register_kernels();
  if (!result) fmt::print(stderr, "et-ops: registering {} failed: {}\n", component.name, result.status().message());
  return result.ok();
}

// Libraries loaded with --load-library stay loaded and registered while
// et-ops runs.
std::vector<LoadedKernelLibrary>& loaded_libraries() {
  static std::vector<LoadedKernelLibrary> libraries;
  return libraries;
}

}  // namespace

std::vector<OptionSpec> registry_setup_options() {
  std::vector<std::string> sets;
  for (const ComponentInfo& c : known_components()) sets.push_back(c.kernel_set);
  return {
      {"--kernels", "LIST",
       fmt::format("the project's kernel sets to register, comma-separated ({}; default: every set built into "
                   "this et-ops; an empty list registers none)",
                   known_names()),
       false, Completion::list_of(sets)},
      {"--policy", "P",
       "the duplicate policy, fatal or first-wins (default: $ET_OPS_DUPLICATE_POLICY, else the build's default)",
       false, Completion::one_of({"fatal", "first-wins"})},
      {"--load-library", "PATH",
       "also register the kernel library at PATH (one that exports et_ops_kernel_library_manifest)", true,
       Completion::files("*.so*")},
  };
}

std::vector<OptionSpec> with_registry_setup(std::vector<OptionSpec> options) {
  for (OptionSpec& o : registry_setup_options()) options.push_back(std::move(o));
  return options;
}

RegistrySetup registry_setup_from(const Arguments& args) {
  RegistrySetup setup;
  setup.kernel_sets = parse_kernel_sets(args.value("--kernels"));
  setup.libraries = args.values("--load-library");
  if (auto policy = args.value("--policy")) {
    const Result<DuplicatePolicy> parsed = parse_duplicate_policy(*policy);
    if (!parsed) throw UsageError("--policy: " + parsed.status().message());
    setup.policy = *parsed;
  }
  return setup;
}

bool apply_registry_setup(const RegistrySetup& setup) {
  if (setup.policy) set_duplicate_policy(*setup.policy);
  bool ok = true;
  for (const std::string& name : setup.kernel_sets) ok = register_kernel_set(name) && ok;
  for (const std::string& path : setup.libraries) {
    Result<LoadedKernelLibrary> library = load_kernel_library(path);
    if (!library) {
      fmt::print(stderr, "et-ops: {}\n", library.status().message());
      ok = false;
    } else {
      loaded_libraries().push_back(*std::move(library));
    }
  }
  return ok;
}

}  // namespace et_ops::tool
