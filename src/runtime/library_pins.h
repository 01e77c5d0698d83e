// Keeps the shared objects that hold a program's kernels loaded for as long
// as the program lives. The registry forgets a library that is unregistered
// and dlclose'd, but a loaded program still holds its function pointers;
// one dlopen reference per library makes that dlclose harmless.
#ifndef ET_OPS_SRC_RUNTIME_LIBRARY_PINS_H
#define ET_OPS_SRC_RUNTIME_LIBRARY_PINS_H

#include <string>
#include <vector>

namespace et_ops::runtime {

class LibraryPins {
 public:
  LibraryPins() = default;
  ~LibraryPins();
  LibraryPins(const LibraryPins&) = delete;
  LibraryPins& operator=(const LibraryPins&) = delete;

  // Pins the shared object that contains `function` (once per object).
  // Code in the main executable needs no pin.
  void pin(const void* function);

 private:
  std::vector<std::string> paths_;
  std::vector<void*> handles_;
};

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_LIBRARY_PINS_H
