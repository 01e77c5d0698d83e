// dlopen, the library's own entry point, and one registration.
#include "et_ops/library_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <sys/stat.h>

#include <utility>

namespace et_ops {
namespace {

// dlsym(handle, name) also searches the library's dependencies: a library
// that merely links a kernel library would hand out that library's entry
// point. Only a symbol defined in the object itself counts.
void* own_symbol(void* handle, const char* name) {
  void* symbol = dlsym(handle, name);
  link_map* library = nullptr;
  link_map* definer = nullptr;
  Dl_info info;
  if (symbol == nullptr || dlinfo(handle, RTLD_DI_LINKMAP, &library) != 0 ||
      dladdr1(symbol, &info, reinterpret_cast<void**>(&definer), RTLD_DL_LINKMAP) == 0)
    return nullptr;
  return definer == library ? symbol : nullptr;
}

}  // namespace

LoadedKernelLibrary::~LoadedKernelLibrary() { close(); }

LoadedKernelLibrary::LoadedKernelLibrary(LoadedKernelLibrary&& other) noexcept { *this = std::move(other); }

LoadedKernelLibrary& LoadedKernelLibrary::operator=(LoadedKernelLibrary&& other) noexcept {
  if (this != &other) {
    close();
    error_ = other.error_;
    message_ = std::move(other.message_);
    path_ = std::move(other.path_);
    library_path_ = std::move(other.library_path_);
    handle_ = std::exchange(other.handle_, nullptr);
    manifest_ = std::exchange(other.manifest_, nullptr);
    registration_ = std::move(other.registration_);
    owns_records_ = std::exchange(other.owns_records_, false);
  }
  return *this;
}

void LoadedKernelLibrary::close() {
  if (owns_records_) unregister_library(library_path_);
  owns_records_ = false;
  manifest_ = nullptr;
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

LoadedKernelLibrary LoadedKernelLibrary::open(std::string_view path_text) {
  LoadedKernelLibrary library;
  const std::string path(path_text);
  library.path_ = path;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    library.fail(LibraryLoadError::Open, fmt::format("{}: no such kernel library", path));
    return library;
  }
  library.library_path_ = canonical_library_path(path);
  // A bare file name would make dlopen search the library path instead.
  const std::string dlopen_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  library.handle_ = dlopen(dlopen_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library.handle_ == nullptr) {
    library.fail(LibraryLoadError::Open, fmt::format("{}: cannot load: {}", path, dlerror()));
    return library;
  }
  auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(
      own_symbol(library.handle_, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
  if (entry == nullptr) {
    library.fail(LibraryLoadError::EntryPoint,
                 fmt::format("{}: not an et_ops kernel library (it does not define {}())", path,
                             ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
    return library;
  }
  library.manifest_ = entry();
  if (library.manifest_ == nullptr) {
    auto explain = reinterpret_cast<et_ops_kernel_library_error_fn>(
        own_symbol(library.handle_, ET_OPS_KERNEL_LIBRARY_ERROR_ENTRY_POINT));
    const char* why = explain != nullptr ? explain() : nullptr;
    library.fail(LibraryLoadError::EntryPoint,
                 fmt::format("{}: {}() returned no manifest{}{}", path, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT,
                             why ? ": " : "", why ? why : ""));
  }
  return library;
}

LoadedKernelLibrary LoadedKernelLibrary::load(std::string_view path) {
  LoadedKernelLibrary library = open(path);
  if (!library.ok()) return library;
  library.registration_ = register_manifest(*library.manifest_);
  if (!library.registration_.ok()) {
    library.fail(LibraryLoadError::Registration,
                 fmt::format("{}: registration failed: {}", library.path_, library.registration_.message()));
    return library;
  }
  // A batch that was all registered already (the very same object: dlopen
  // only counted one more reference) is not this handle's to remove.
  library.owns_records_ = library.registration_.registered() + library.registration_.deduplicated() > 0;
  return library;
}

}  // namespace et_ops
