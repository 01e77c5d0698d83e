// dlopen, the entry point, and registration of a kernel library.
#include "library_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include "et_ops/registry.h"

namespace et_ops::tool {

OpenedLibrary open_kernel_library(const std::string& path) {
  OpenedLibrary library;
  library.path = path;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    library.error = fmt::format("{}: no such kernel library", path);
    return library;
  }
  // A bare file name would make dlopen search the library path instead.
  const std::string dlopen_path = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(dlopen_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    library.error = fmt::format("{}: cannot load: {}", path, dlerror());
    return library;
  }
  auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(dlsym(handle, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
  if (entry == nullptr) {
    library.error = fmt::format("{}: not an et_ops kernel library (no {} entry point)", path,
                                ET_OPS_KERNEL_LIBRARY_ENTRY_POINT);
    return library;
  }
  library.manifest = entry();
  if (library.manifest == nullptr) library.error = fmt::format("{}: the entry point returned no manifest", path);
  return library;
}

std::string load_and_register(const std::string& path) {
  const OpenedLibrary library = open_kernel_library(path);
  if (!library.ok()) return library.error;
  const RegistrationResult result = register_manifest(*library.manifest);
  if (!result) return fmt::format("{}: registration failed: {}", path, result.message());
  return {};
}

}  // namespace et_ops::tool
