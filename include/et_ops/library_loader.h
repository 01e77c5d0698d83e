// Loading a kernel library by path: the one loader of et_ops, used by
// `et-ops --load-library`, `et-ops check` and et_ops.load_library().
#ifndef ET_OPS_LIBRARY_LOADER_H
#define ET_OPS_LIBRARY_LOADER_H

#include <string>
#include <string_view>
#include <utility>

#include "et_ops/abi.h"
#include "et_ops/export.h"
#include "et_ops/registry.h"
#include "et_ops/status.h"

namespace et_ops {

// An owning handle of a kernel library opened by path. Destroying it
// unregisters the records it registered and drops its reference to the
// shared object, which stays loaded while a loaded program uses its kernels.
// A failed load leaves nothing registered and nothing open; its status
// names the path and what is wrong: LibraryOpen (no such file, or dlopen
// refused it), EntryPoint (no et_ops_kernel_library_manifest() of its own,
// or it gave no manifest), or the registration's code (Conflict, Invalid,
// Policy, NoMemory) when the registry refused the manifest.
class ET_OPS_API LoadedKernelLibrary {
 public:
  LoadedKernelLibrary() = default;
  ~LoadedKernelLibrary();
  LoadedKernelLibrary(LoadedKernelLibrary&& other) noexcept;
  LoadedKernelLibrary& operator=(LoadedKernelLibrary&& other) noexcept;
  LoadedKernelLibrary(const LoadedKernelLibrary&) = delete;
  LoadedKernelLibrary& operator=(const LoadedKernelLibrary&) = delete;

  // The path as given, and the shared object's canonical path.
  const std::string& path() const { return path_; }
  const std::string& library_path() const { return library_path_; }
  // The library's manifest while the handle is open, else nullptr.
  const et_ops_manifest* manifest() const { return manifest_; }
  // The registration's counts (load_kernel_library only).
  const Registration& registration() const { return registration_; }

  // Unregisters what this handle registered and closes it now.
  void close();

  // What open_kernel_library() and load_kernel_library() do.
  static Result<LoadedKernelLibrary> open(std::string_view path);
  static Result<LoadedKernelLibrary> load(std::string_view path);

 private:
  std::string path_;
  std::string library_path_;
  void* handle_ = nullptr;
  const et_ops_manifest* manifest_ = nullptr;
  Registration registration_;
  bool owns_records_ = false;  // it added records (not only found them registered already)
};

// Opens the library at `path` and reads its manifest, registering nothing
// (et-ops check).
inline Result<LoadedKernelLibrary> open_kernel_library(std::string_view path) {
  return LoadedKernelLibrary::open(path);
}

// Opens the library at `path` and registers its manifest as one batch.
inline Result<LoadedKernelLibrary> load_kernel_library(std::string_view path) {
  return LoadedKernelLibrary::load(path);
}

}  // namespace et_ops

#endif  // ET_OPS_LIBRARY_LOADER_H
