// The exceptions that carry a load error from deep inside validation to
// Program::load, which turns them into a LoadResult. They never cross the
// library's interface.
#ifndef ET_OPS_SRC_RUNTIME_LOAD_ERRORS_H
#define ET_OPS_SRC_RUNTIME_LOAD_ERRORS_H

#include <stdexcept>

namespace et_ops::runtime {

// The file cannot be opened or read.
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The bytes are not a valid .etp version 1 program (or break a LoadLimit).
struct FormatError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_LOAD_ERRORS_H
