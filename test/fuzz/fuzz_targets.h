// The fuzz targets' entry functions. Each takes one input, exercises the
// code under test with it, and returns 0; a bug shows as a crash or a
// sanitizer report, never as a return value. The same functions run under
// libFuzzer (libfuzzer_entry.cpp, -Dfuzzing=true) and in the replay driver
// of the normal test suite (replay/replay_main.cpp).
#ifndef ET_OPS_TEST_FUZZ_FUZZ_TARGETS_H
#define ET_OPS_TEST_FUZZ_FUZZ_TARGETS_H

#include <cstddef>
#include <cstdint>

namespace et_ops::fuzz {

// The whole file bytes of an .etp program: load it; if it loads, run it
// once with zeroed inputs and read every output.
int fuzz_etp_loader(const uint8_t* data, std::size_t size);

// The bytes of a .npy file: parse it; if it parses, encode it again.
int fuzz_npy_reader(const uint8_t* data, std::size_t size);

// A call of one quantized kernel through the registry, every argument
// (kind, dtype, shape, layout, elements, scalars) decoded from the bytes.
int fuzz_quantized_kernels(const uint8_t* data, std::size_t size);

// The same for one aten kernel of the portable library (int lists, bools
// and Scalars decoded too).
int fuzz_portable_kernels(const uint8_t* data, std::size_t size);

int fuzz_xnnpack_kernels(const uint8_t* data, std::size_t size);

// The operators that write a program's state in place (index_put,
// index_copy, copy, add), with a guarded state buffer as self and out.
int fuzz_state_writes(const uint8_t* data, std::size_t size);

// A fuzz target's defect that is not a crash (an error without a message, a
// changed input tensor): reported on stderr, then abort(), so libFuzzer and
// the replay driver both see a crash.
[[noreturn]] void target_failure(const char* target, const char* what);

}  // namespace et_ops::fuzz

#endif  // ET_OPS_TEST_FUZZ_FUZZ_TARGETS_H
