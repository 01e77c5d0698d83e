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

Result<LoadedKernelLibrary> LoadedKernelLibrary::open(std::string_view path_text) {
  LoadedKernelLibrary library;  // its destructor closes what a failure leaves open
  const std::string path(path_text);
  library.path_ = path;
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return Status(StatusCode::LibraryOpen, fmt::format("{}: no such kernel library", path));
  library.library_path_ = canonical_library_path(path);
  // A bare file name would make dlopen search the library path instead.
  const std::string dlopen_path = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  library.handle_ = dlopen(dlopen_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library.handle_ == nullptr)
    return Status(StatusCode::LibraryOpen, fmt::format("{}: cannot load: {}", path, dlerror()));
  auto entry = reinterpret_cast<et_ops_kernel_library_entry_fn>(
      own_symbol(library.handle_, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
  if (entry == nullptr)
    return Status(StatusCode::EntryPoint, fmt::format("{}: not an et_ops kernel library (it does not define {}())",
                                                      path, ET_OPS_KERNEL_LIBRARY_ENTRY_POINT));
  library.manifest_ = entry();
  if (library.manifest_ == nullptr) {
    auto explain = reinterpret_cast<et_ops_kernel_library_error_fn>(
        own_symbol(library.handle_, ET_OPS_KERNEL_LIBRARY_ERROR_ENTRY_POINT));
    const char* why = explain != nullptr ? explain() : nullptr;
    return Status(StatusCode::EntryPoint, fmt::format("{}: {}() returned no manifest{}{}", path,
                                                      ET_OPS_KERNEL_LIBRARY_ENTRY_POINT, why ? ": " : "",
                                                      why ? why : ""));
  }
  return library;
}

Result<LoadedKernelLibrary> LoadedKernelLibrary::load(std::string_view path) {
  Result<LoadedKernelLibrary> opened = open(path);
  if (!opened) return opened;
  LoadedKernelLibrary& library = *opened;
  const RegistrationResult registration = register_manifest(*library.manifest_);
  if (!registration)
    return registration.status().prefixed(fmt::format("{}: registration failed", library.path_));
  library.registration_ = *registration;
  // A batch that was all registered already (the very same object: dlopen
  // only counted one more reference) is not this handle's to remove.
  library.owns_records_ = library.registration_.registered + library.registration_.deduplicated > 0;
  return opened;
}

}  // namespace et_ops
