// Vectorised dequantize loops (see vector_kernels.h), compiled once per
// Highway target and dispatched at run time.
#define HWY_TARGET_INCLUDE "dequantize_simd.cpp"
#include "common/hwy_per_target.h"

#include "vector_kernels.h"
#include "vector_ops-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::simd)

// §4.3, f32: fl32(q) is exact for narrow q and rounds to nearest even for i32,
// like the scalar conversion; then one subtraction and one multiplication.
template <typename Q>
void DequantizeToF32Loop(const Q* in, std::size_t n, float zero_point, float scale, float* out) {
  WriteEach(hn::ScalableTag<float>(), n, sizeof(Q), out, [&](auto df, std::size_t i) {
    const hn::RebindToSigned<decltype(df)> di;
    PrefetchAhead(in, i, n, hn::Lanes(df));
    const auto q = hn::ConvertTo(df, LoadAsI32(di, in + i));
    return hn::Mul(hn::Sub(q, hn::Set(df, zero_point)), hn::Set(df, scale));
  });
}

bool DequantizeToF32(DType in_dtype, const void* in, std::size_t n, float zero_point, float scale, float* out) {
  switch (in_dtype) {
    case DType::UInt8: DequantizeToF32Loop(static_cast<const uint8_t*>(in), n, zero_point, scale, out); return true;
    case DType::Int8: DequantizeToF32Loop(static_cast<const int8_t*>(in), n, zero_point, scale, out); return true;
    case DType::Int16: DequantizeToF32Loop(static_cast<const int16_t*>(in), n, zero_point, scale, out); return true;
    case DType::UInt16: DequantizeToF32Loop(static_cast<const uint16_t*>(in), n, zero_point, scale, out); return true;
    case DType::Int32: DequantizeToF32Loop(static_cast<const int32_t*>(in), n, zero_point, scale, out); return true;
    default: return false;
  }
}

// Binary64: q widens exactly, q - zp is exact for |zp| <= 2^52, one rounding
// for the product, and for an f32 output one more rounding to binary32.
template <typename Q, typename Out>
void DequantizeBinary64Loop(const Q* in, std::size_t n, double zero_point, double scale, Out* out) {
  WriteEach(hn::ScalableTag<double>(), n, sizeof(Q), out, [&](auto dd, std::size_t i) {
    const hn::Rebind<int32_t, decltype(dd)> di;
    PrefetchAhead(in, i, n, hn::Lanes(dd));
    const auto q = hn::PromoteTo(dd, LoadAsI32(di, in + i));
    const auto w = hn::Mul(hn::Sub(q, hn::Set(dd, zero_point)), hn::Set(dd, scale));
    if constexpr (std::is_same_v<Out, double>) return w;
    else return hn::DemoteTo(hn::Rebind<float, decltype(dd)>(), w);
  });
}

template <typename Q>
bool DequantizeBinary64From(const void* in, std::size_t n, double zero_point, double scale, DType out_dtype,
                            void* out) {
  const auto* q = static_cast<const Q*>(in);
  if (out_dtype == DType::Float64)
    DequantizeBinary64Loop(q, n, zero_point, scale, static_cast<double*>(out));
  else if (out_dtype == DType::Float32)
    DequantizeBinary64Loop(q, n, zero_point, scale, static_cast<float*>(out));
  else
    return false;
  return true;
}

bool DequantizeBinary64(DType in_dtype, const void* in, std::size_t n, double zero_point, double scale,
                        DType out_dtype, void* out) {
  switch (in_dtype) {
    case DType::UInt8: return DequantizeBinary64From<uint8_t>(in, n, zero_point, scale, out_dtype, out);
    case DType::Int8: return DequantizeBinary64From<int8_t>(in, n, zero_point, scale, out_dtype, out);
    case DType::Int16: return DequantizeBinary64From<int16_t>(in, n, zero_point, scale, out_dtype, out);
    case DType::UInt16: return DequantizeBinary64From<uint16_t>(in, n, zero_point, scale, out_dtype, out);
    case DType::Int32: return DequantizeBinary64From<int32_t>(in, n, zero_point, scale, out_dtype, out);
    default: return false;
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::simd)

#if HWY_ONCE
namespace et_ops::kernels::quantized::simd {

HWY_EXPORT(DequantizeToF32);
HWY_EXPORT(DequantizeBinary64);

bool dequantize_to_f32(DType in_dtype, const void* in, std::size_t n, float zero_point, float scale, float* out) {
  return HWY_DYNAMIC_DISPATCH(DequantizeToF32)(in_dtype, in, n, zero_point, scale, out);
}

bool dequantize_binary64(DType in_dtype, const void* in, std::size_t n, double zero_point, double scale,
                         DType out_dtype, void* out) {
  return HWY_DYNAMIC_DISPATCH(DequantizeBinary64)(in_dtype, in, n, zero_point, scale, out_dtype, out);
}

}  // namespace et_ops::kernels::quantized::simd
#endif  // HWY_ONCE
