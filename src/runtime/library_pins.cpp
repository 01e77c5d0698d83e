// Pinning kernel libraries with RTLD_NOLOAD references.
#include "runtime/library_pins.h"

#include <dlfcn.h>

#include <algorithm>

namespace et_ops::runtime {

LibraryPins::~LibraryPins() {
  for (void* handle : handles_) dlclose(handle);
}

void LibraryPins::pin(const void* function) {
  Dl_info info{};
  if (dladdr(function, &info) == 0 || info.dli_fname == nullptr || *info.dli_fname == '\0') return;
  std::string path = info.dli_fname;
  if (std::find(paths_.begin(), paths_.end(), path) != paths_.end()) return;
  // Room first: once dlopen has taken a reference, recording it must not
  // throw, or the reference would outlive a failed load.
  paths_.reserve(paths_.size() + 1);
  handles_.reserve(handles_.size() + 1);
  // RTLD_NOLOAD only takes a reference to an object that is already loaded;
  // the main executable is not found by name and needs no pin.
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  paths_.push_back(std::move(path));
  if (handle != nullptr) handles_.push_back(handle);
}

}  // namespace et_ops::runtime
