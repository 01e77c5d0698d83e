// Vectorised float32 and float64 loops of the elementwise activations and of
// softmax's exponential (Highway, dispatched at run time to the best target
// of the CPU). Every lane performs the same IEEE operations in the same
// order on every target, with no fused multiply-add and no libm, so results
// are the same bits on every x86-64 machine. Callers pass contiguous runs
// and handle layouts themselves (detail::map_contiguous).
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_ACTIVATION_SIMD_H
#define ET_OPS_SRC_KERNELS_PORTABLE_ACTIVATION_SIMD_H

#include <cstddef>

namespace et_ops::kernels::portable::simd {

enum class Unary : int {
  Exp,          // e^x (float32: computed in binary64, rounded once)
  Sigmoid,      // 1 / (1 + e), e = e^-x rounded to the element type, as PyTorch
  Tanh,         // float32: computed in binary64, rounded once
  Hardswish,    // x * min(max(x + 3, 0), 6) / 6
  Hardsigmoid,  // min(max(x + 3, 0), 6) / 6
  LeakyRelu,    // x > 0 ? x : x * slope
  Clamp,        // t = x < lo ? lo : x, then hi < t ? hi : t (NaN x stays; a NaN bound never wins)
  Sqrt,         // IEEE square root
  Rsqrt,        // 1 / sqrt(x), two roundings, as PyTorch
  Silu,         // x / (1 + e), e = e^-x rounded to the element type, as PyTorch
  Gelu,         // (x * 0.5) * (1 + erf(x * sqrt(1/2))), erf computed in binary64 and rounded once
  GeluTanh,     // (0.5 * x) * (1 + tanh(b * (x + 0.044715 * x^3))), b = sqrt(2 / pi), tanh in binary64
};

// Parameters of LeakyRelu and Clamp, already values of the element type.
struct UnaryParams {
  double slope = 0.0;
  double lo = 0.0;
  double hi = 0.0;
  bool has_lo = false;
  bool has_hi = false;
};

// Every Unary, for the declarations below and the loops of activation_simd.cpp.
#define ET_OPS_PORTABLE_UNARY_OPS(X) \
  X(Exp) X(Sigmoid) X(Tanh) X(Hardswish) X(Hardsigmoid) X(LeakyRelu) X(Clamp) X(Sqrt) X(Rsqrt) X(Silu) X(Gelu) X(GeluTanh)

// out[i] = op(in[i]) for i < n; in may equal out. One function per
// operation, so that a kernel library (a selective build) keeps only the
// loops of the kernels it keeps.
template <Unary op>
void apply(const float* in, float* out, std::size_t n, const UnaryParams& params);
template <Unary op>
void apply(const double* in, double* out, std::size_t n, const UnaryParams& params);

#define ET_OPS_PORTABLE_DECLARE_UNARY(name)                                                         \
  template <>                                                                                      \
  void apply<Unary::name>(const float* in, float* out, std::size_t n, const UnaryParams& params);   \
  template <>                                                                                      \
  void apply<Unary::name>(const double* in, double* out, std::size_t n, const UnaryParams& params);
ET_OPS_PORTABLE_UNARY_OPS(ET_OPS_PORTABLE_DECLARE_UNARY)
#undef ET_OPS_PORTABLE_DECLARE_UNARY

}  // namespace et_ops::kernels::portable::simd

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_ACTIVATION_SIMD_H
