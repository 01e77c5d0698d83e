// Opening a kernel library by path and reading its manifest through the
// loadable-library entry point, without registering anything.
#ifndef ET_OPS_TOOLS_LIBRARY_LOADER_H
#define ET_OPS_TOOLS_LIBRARY_LOADER_H

#include <string>

#include "et_ops/abi.h"

namespace et_ops::tool {

struct OpenedLibrary {
  std::string path;
  const et_ops_manifest* manifest = nullptr;  // null on error
  std::string error;                          // names the path and what is wrong
  bool ok() const { return manifest != nullptr; }
};

// dlopen (kept open for the life of the process) + the entry point.
OpenedLibrary open_kernel_library(const std::string& path);

// Opens the library and registers its manifest; an empty string on
// success, else the error.
std::string load_and_register(const std::string& path);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_LIBRARY_LOADER_H
