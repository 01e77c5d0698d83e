// et-ops check [LIBRARY...] [--json]
// The ownership table: which kernel library provides which operator, and
// every collision between libraries (with whether the copies are
// identical), read from each library's manifest without registering
// anything. Without arguments it checks the shipped kernel libraries next
// to libet_ops.so.
#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "args.h"
#include "commands.h"
#include "et_ops/diagnostics.h"
#include "et_ops/library_loader.h"
#include "et_ops/registry.h"
#include "exit_codes.h"

namespace et_ops::tool {
namespace {

struct Provided {
  std::string op, key, schema, fingerprint;
  std::size_t library;  // index into the opened libraries
};

struct Collision {
  std::vector<const Provided*> copies;
  bool identical = true;
  std::vector<std::string> differences;  // "schema", "fingerprint"
};

// A library as named, opened or not.
struct OpenedLibrary {
  std::string path;
  Result<LoadedKernelLibrary> library;
  bool ok() const { return library.ok(); }
  const et_ops_manifest* manifest() const { return ok() ? library->manifest() : nullptr; }
};

struct Ownership {
  std::vector<OpenedLibrary> libraries;
  std::vector<Provided> provided;
  std::vector<Collision> collisions;
  bool ok() const;
};

bool Ownership::ok() const {
  for (const OpenedLibrary& library : libraries)
    if (!library.ok()) return false;
  return collisions.empty();
}

// The directory of libet_ops.so, found from one of its functions.
std::filesystem::path runtime_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&et_ops_lookup_fallback), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(canonical_library_path(info.dli_fname)).parent_path();
}

// Installed, the kernel libraries sit beside libet_ops.so; in a build tree
// they sit in src/kernels/ below it. The soname comes first: in a wheel the
// unversioned name is a linker script, not a library.
std::string find_shipped_library(const std::filesystem::path& directory, const ComponentInfo& component) {
  for (const std::filesystem::path& candidate :
       {directory / (component.library + "." ET_OPS_SO_VERSION), directory / component.library,
        directory / "kernels" / component.library})
    if (std::filesystem::exists(candidate)) return candidate.string();
  return (directory / component.library).string();  // reported as missing
}

std::vector<std::string> shipped_libraries() {
  const std::filesystem::path directory = runtime_directory();
  std::vector<std::string> paths;
  for (const ComponentInfo& component : known_components()) paths.push_back(find_shipped_library(directory, component));
  return paths;
}

std::vector<OpenedLibrary> open_libraries(const std::vector<std::string>& paths) {
  std::vector<OpenedLibrary> libraries;
  std::vector<std::string> seen;  // the same file named twice is checked once
  for (const std::string& path : paths) {
    const std::string canonical = canonical_library_path(path);
    if (std::find(seen.begin(), seen.end(), canonical) != seen.end()) continue;
    seen.push_back(canonical);
    libraries.push_back({path, open_kernel_library(path)});
  }
  return libraries;
}

std::vector<Provided> provided_operators(const std::vector<OpenedLibrary>& libraries) {
  std::vector<Provided> provided;
  for (std::size_t l = 0; l < libraries.size(); ++l) {
    const et_ops_manifest* m = libraries[l].manifest();
    if (m == nullptr) continue;
    for (std::size_t r = 0; r < m->record_count; ++r) {
      // Records may be larger than ours (a newer builder); step by their size.
      const et_ops_kernel_record& record = *et_ops_manifest_record(m, r);
      auto text = [](const char* s) { return std::string(s ? s : ""); };
      provided.push_back({text(record.op), text(record.key), text(record.schema), text(record.fingerprint), l});
    }
  }
  return provided;
}

Collision collision_of(const std::vector<const Provided*>& copies) {
  Collision collision{copies, true, {}};
  for (const Provided* copy : copies) {
    auto note = [&collision](const char* what) {
      collision.identical = false;
      if (std::find(collision.differences.begin(), collision.differences.end(), what) == collision.differences.end())
        collision.differences.push_back(what);
    };
    if (copy->schema != copies.front()->schema) note("schema");
    if (copy->fingerprint != copies.front()->fingerprint) note("fingerprint");
  }
  return collision;
}

std::vector<Collision> find_collisions(const std::vector<Provided>& provided) {
  std::map<std::pair<std::string, std::string>, std::vector<const Provided*>> by_key;
  for (const Provided& p : provided) by_key[{p.op, p.key}].push_back(&p);
  std::vector<Collision> collisions;
  for (const auto& [key, copies] : by_key)
    if (copies.size() > 1) collisions.push_back(collision_of(copies));
  return collisions;
}

Ownership check_ownership(const std::vector<std::string>& paths) {
  Ownership ownership;
  ownership.libraries = open_libraries(paths);
  ownership.provided = provided_operators(ownership.libraries);
  ownership.collisions = find_collisions(ownership.provided);
  return ownership;
}

std::string key_text(const std::string& key) { return key.empty() ? "fallback" : key; }

std::string component_of(const OpenedLibrary& library) {
  return library.manifest() && library.manifest()->component ? library.manifest()->component : "";
}

void print_text(const Ownership& o) {
  fmt::print("kernel libraries:\n");
  for (const OpenedLibrary& library : o.libraries) {
    if (library.ok())
      fmt::print("  {} {}  {}  ({} records)\n", component_of(library),
                 library.manifest()->version ? library.manifest()->version : "", library.path,
                 library.manifest()->record_count);
    else
      fmt::print("  ERROR  {}\n", library.library.status().message());
  }
  fmt::print("operators:\n");
  for (const Provided& p : o.provided)
    fmt::print("  {}  [{}]  {}  {}\n", p.op, key_text(p.key), component_of(o.libraries[p.library]),
               o.libraries[p.library].path);
  if (o.collisions.empty()) fmt::print("collisions: none\n");
  else fmt::print("collisions: {} operator(s) provided by more than one library\n", o.collisions.size());
  for (const Collision& c : o.collisions) {
    std::vector<std::string> where;
    for (const Provided* copy : c.copies) where.push_back(o.libraries[copy->library].path);
    fmt::print("  {} [{}]: {} in {}\n", c.copies.front()->op, key_text(c.copies.front()->key),
               c.identical ? "identical copies (same schema and fingerprint)"
                           : fmt::format("different copies ({} differ)", fmt::join(c.differences, " and ")),
               fmt::join(where, ", "));
  }
}

nlohmann::json to_json(const Ownership& o) {
  nlohmann::json libraries = nlohmann::json::array(), operators = nlohmann::json::array(),
                 collisions = nlohmann::json::array();
  for (const OpenedLibrary& library : o.libraries)
    libraries.push_back({{"path", library.path}, {"component", component_of(library)},
                         {"version", library.ok() && library.manifest()->version ? library.manifest()->version : ""},
                         {"error", library.library.status().message()}});
  for (const Provided& p : o.provided)
    operators.push_back({{"op", p.op}, {"key", key_text(p.key)}, {"library", o.libraries[p.library].path},
                         {"component", component_of(o.libraries[p.library])}, {"fingerprint", p.fingerprint}});
  for (const Collision& c : o.collisions) {
    nlohmann::json where = nlohmann::json::array();
    for (const Provided* copy : c.copies) where.push_back(o.libraries[copy->library].path);
    collisions.push_back({{"op", c.copies.front()->op}, {"key", key_text(c.copies.front()->key)},
                          {"libraries", where}, {"identical", c.identical}, {"differences", c.differences}});
  }
  return {{"libraries", libraries}, {"operators", operators}, {"collisions", collisions}, {"ok", o.ok()}};
}

}  // namespace

CommandSpec check_spec() {
  return command_spec("check", "which kernel library provides which operator, and every collision between them",
      "Reads each library's manifest without registering anything. Without LIBRARY, checks the kernel\n"
      "libraries shipped next to libet_ops.so. Exits 1 on a collision or a library that cannot be loaded.\n",
      {"[LIBRARY...]", 0, SIZE_MAX, Completion::files("*.so*")},
      {{"--json", "", "print JSON: libraries, operators, collisions", false, {}}});
}

int check_command(const Arguments& args) {
  const Ownership ownership =
      check_ownership(args.positional().empty() ? shipped_libraries() : args.positional());
  if (args.flag("--json")) fmt::print("{}\n", to_json(ownership).dump(2));
  else print_text(ownership);
  for (const OpenedLibrary& library : ownership.libraries)
    if (!library.ok()) fmt::print(stderr, "et-ops: {}\n", library.library.status().message());
  return ownership.ok() ? kExitOk : kExitFailure;
}

}  // namespace et_ops::tool
