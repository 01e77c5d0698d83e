// Vectorised inner loops of the streaming quantized kernels (Highway, with
// run-time dispatch to the best target of the CPU). Every lane performs
// exactly the scalar operations of the reference, in the same order, with no
// fused multiply-add, so results are bit-identical to the scalar definitions.
// Callers pass contiguous runs of elements and handle layouts themselves.
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_VECTOR_KERNELS_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_VECTOR_KERNELS_H

#include <cstddef>
#include <cstdint>

#include "et_ops/dtype.h"

namespace et_ops::kernels::quantized::simd {

// Per-tensor quantize (reference §3.3) of f32 elements:
// out = sat(fl32(rne(fl32(x * inv)) + zero_point), quant_min, quant_max).
struct PerTensorQuantize {
  float inv;
  float zero_point;
  int64_t quant_min;
  int64_t quant_max;
};

// out_dtype: any quantized dtype. Returns false (writing nothing) for any
// other dtype, or for an int8, uint8, int16 or uint16 range beyond 2^22 in
// magnitude (never a valid one): the caller then runs the scalar loop.
bool quantize_f32(const float* in, std::size_t n, const PerTensorQuantize& params, DType out_dtype, void* out);

// Binary64 quantize of elements that share one scale (reference §3.4, §3.5):
// per channel sat(fl64(rne(fl64(x * inv)) + zp)); per token, with
// zero_point_before_rounding, sat(rne(fl64(fl64(x * inv) + zp))).
struct Binary64Quantize {
  double inv;
  double zero_point;
  bool zero_point_before_rounding;
  int64_t quant_min;
  int64_t quant_max;
};

// in_dtype: f32 or f64; out_dtype: any quantized dtype. Returns false
// (writing nothing) for other dtypes.
bool quantize_binary64(DType in_dtype, const void* in, std::size_t n, const Binary64Quantize& params,
                       DType out_dtype, void* out);

// Dequantize to f32 (reference §4.3): out = fl32(fl32(fl32(q) - zero_point) * scale).
// in_dtype: any quantized dtype; returns false for others.
bool dequantize_to_f32(DType in_dtype, const void* in, std::size_t n, float zero_point, float scale, float* out);

// Dequantize in binary64: w = fl64(fl64(fl64(q) - zero_point) * scale),
// stored as f64 or rounded once to f32. The caller guarantees
// |zero_point| <= 2^52, so fl64(q) - zero_point is the exact q - zp.
// in_dtype: any quantized dtype; out_dtype: f32 or f64.
bool dequantize_binary64(DType in_dtype, const void* in, std::size_t n, double zero_point, double scale,
                         DType out_dtype, void* out);

// The clipped range [min(x, 0), max(x, 0)] of n contiguous f32 elements,
// zeros of either sign giving +0 (choose_qparams' range); returns whether
// any element is NaN (the range is then meaningless).
bool clipped_range(const float* x, std::size_t n, float* low, float* high);

// int4 values stored two per byte in embedding_4bit's layout (reference
// §6.2: element 2m in the high nibble of byte m, 2m+1 in the low one, each
// with a +8 offset), unpacked to 2 * bytes int8 values in [-8, 7].
void unpack_nibbles(const uint8_t* packed, std::size_t bytes, int8_t* out);

// add (reference §8.2), elementwise over a, b and out of one dtype:
// da = fl32(fl32(fl32(a) - a_zero_point) * a_scale), db likewise,
// out = sat(fl32(rne(fl32(fl32(da + db) * inv)) + out_zero_point)).
struct QuantizedAdd {
  float a_zero_point;
  float a_scale;
  float b_zero_point;
  float b_scale;
  float inv;
  float out_zero_point;
  int64_t quant_min;
  int64_t quant_max;
};

// dtype: u8, i8, i16 or i32 (whose quant ranges lie within [0, 255]);
// returns false for others. out may alias a or b.
bool add(DType dtype, const void* a, const void* b, std::size_t n, const QuantizedAdd& params, void* out);

}  // namespace et_ops::kernels::quantized::simd

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_VECTOR_KERNELS_H
