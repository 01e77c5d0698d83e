// libFuzzer's entry point for one target; ET_OPS_FUZZ_ENTRY names the
// target's entry function (see meson.build). Only the -Dfuzzing=true build
// compiles this file.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

#ifndef ET_OPS_FUZZ_ENTRY
#error "the build defines ET_OPS_FUZZ_ENTRY as the target's entry function"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  return et_ops::fuzz::ET_OPS_FUZZ_ENTRY(data, size);
}
