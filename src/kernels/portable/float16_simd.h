// Contiguous runs of float32 converted to and from float16 and bfloat16
// (copy.out's conversions, a 16-bit cache written and read), vectorised per
// Highway target with the bits of et_ops::Half and BFloat16 on every one:
// widening is exact, narrowing rounds to nearest even.
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_FLOAT16_SIMD_H
#define ET_OPS_SRC_KERNELS_PORTABLE_FLOAT16_SIMD_H

#include <cstddef>
#include <cstdint>

namespace et_ops::kernels::portable::simd {

// out[i] = the 16-bit pattern of in[i] for i < n.
void narrow_to_float16(const float* in, uint16_t* out, std::size_t n);
void narrow_to_bfloat16(const float* in, uint16_t* out, std::size_t n);

// out[i] = the float of the 16-bit pattern in[i] for i < n.
void widen_float16(const uint16_t* in, float* out, std::size_t n);
void widen_bfloat16(const uint16_t* in, float* out, std::size_t n);

}  // namespace et_ops::kernels::portable::simd

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_FLOAT16_SIMD_H
