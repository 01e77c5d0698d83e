// What the fuzz targets share: how a defect that is not a crash is made one.
#include <cstdio>
#include <cstdlib>

#include "fuzz_targets.h"

namespace et_ops::fuzz {

void target_failure(const char* target, const char* what) {
  std::fprintf(stderr, "fuzz target %s: %s\n", target, what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace et_ops::fuzz
