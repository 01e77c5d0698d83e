// A kernel library local to the runtime tests, registered in-process, so
// most runtime tests depend on no other engineer's kernels.
//
//   et_test_rt::add.out(Tensor a, Tensor b, *, Tensor(a!) out)       float32 a + b
//   et_test_rt::scale.out(Tensor a, float factor, *, Tensor(a!) out)  float32 a * factor
//   et_test_rt::copy.out(Tensor a, *, Tensor(a!) out)                 copies the bytes (same dtype and size)
//   et_test_rt::fail.out(Tensor a, *, Tensor(a!) out)                 always fails: "deliberate failure"
//   et_test_rt::describe.out(..., *, Tensor(a!) out)                  int64 out[2i], out[2i+1] = tag, payload of arg i
//   et_test_rt::poke.out(Tensor a)                                    writes 1 into the first byte of a
//   et_test_rt::which.out(Tensor a, *, Tensor(a!) out)                int64 out[0] = 0 (fallback) or 1 (int8 kernel)
#ifndef ET_OPS_TEST_RUNTIME_TEST_KERNELS_H
#define ET_OPS_TEST_RUNTIME_TEST_KERNELS_H

namespace et_ops::test {

inline constexpr const char* kTestComponent = "runtime_test_kernels";

// Registers the kernels above (idempotent); fails the test program on error.
void register_test_kernels();

}  // namespace et_ops::test

#endif  // ET_OPS_TEST_RUNTIME_TEST_KERNELS_H
