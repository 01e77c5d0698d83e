// The depthwise convolution kernel of depthwise.h, compiled once per SIMD
// target (Highway's foreach_target) and chosen at run time.
//
// A band of input rows is copied, once per input channel and promoted to
// float64, into a zero-padded buffer split into stride phases, so that
// neighbouring outputs read neighbouring values; each vector then holds
// neighbouring output pixels and sums their kH * kW taps in order from
// +0.0 in float64 (exact products, as gemm.h), then the bias, and rounds
// once to float32.
#define HWY_TARGET_INCLUDE "depthwise.cpp"
#include "common/hwy_per_target.h"

#include <algorithm>

#include "checks.h"
#include "depthwise.h"
#include "vector_math-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::portable::detail)
// Internal linkage: the kernel files share this per-target namespace.
namespace {

using namespace simd::HWY_NAMESPACE;  // DD, VD, DH and DemoteToFloat

// The padded input band (float64) and the band's outputs (float32) live on
// the stack (64 KiB and 32 KiB): a 112 x 112 plane takes two bands, a
// 56 x 56 one.
constexpr int64_t kBandValues = 8192;
constexpr int64_t kOutFloats = 8192;
constexpr int64_t kMaxTaps = 128;
constexpr int64_t kMaxStride = 8;
// Output vectors computed together: enough independent sums to hide the
// latency of the additions.
constexpr int kGroup = 8;

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(DD())); }

// A band of input rows, zero-padded and split into stride_h x stride_w
// phase planes: plane (a, b) row i column t holds padded pixel
// (pr0 + a + i * stride_h, b + t * stride_w), where padded pixel (ph, pw)
// is input pixel (ph - padding_h, pw - padding_w), or 0.0 outside the
// input. Output pixel (r, ow) of the band then reads tap (kh, kw) at plane
// ((kh * dilation_h) % stride_h, (kw * dilation_w) % stride_w), row
// r + (kh * dilation_h) / stride_h, column ow + (kw * dilation_w) / stride_w:
// neighbouring outputs read neighbouring values, so one vector computes
// `lanes()` outputs of a flattened (row, column) index q = r * row_len + ow
// (columns past out_w are computed and dropped).
struct BandLayout {
  int64_t row_len;     // values per plane row (>= out_w)
  int64_t plane_rows;  // rows per plane
  int64_t plane_size;  // values per plane, with slack for the last vector's reads
  int64_t out_rows;    // output rows per band
  // Per column phase q: the plane columns [first, end) that hold input
  // columns (the others stay 0.0).
  int64_t first[kMaxStride], end[kMaxStride];
};

// False when the band's buffers cannot hold one output row (very wide
// inputs, kernels or strides): the caller then takes the matrix-product path.
bool plan_band(const Depthwise& c, BandLayout& b) {
  if (c.kernel_h * c.kernel_w > kMaxTaps || c.stride_w > kMaxStride) return false;
  const int64_t padded_w = c.in_w + 2 * c.padding_w;
  const int64_t reach_h = (c.kernel_h - 1) * c.dilation_h / c.stride_h;
  const int64_t reach_w = (c.kernel_w - 1) * c.dilation_w / c.stride_w;
  b.row_len = ceil_div(padded_w, c.stride_w);
  if (b.row_len > kOutFloats / 2 || c.stride_h > kBandValues / b.row_len) return false;
  const int64_t planes = c.stride_h * c.stride_w;
  const int64_t slack = reach_w + 2 * lanes();
  // Output rows R need planes * ((R + reach_h) * row_len + slack) input values
  // and R * row_len + lanes() output floats.
  const int64_t by_input = (kBandValues / planes - slack) / b.row_len - reach_h;
  const int64_t by_output = (kOutFloats - lanes()) / b.row_len;
  b.out_rows = std::min({c.out_h, by_input, by_output});
  if (b.out_rows < 1) return false;
  b.plane_rows = b.out_rows + reach_h;
  b.plane_size = b.plane_rows * b.row_len + slack;
  for (int64_t q = 0; q < c.stride_w; ++q) {
    // Plane columns t whose input column q + t * stride_w - padding_w is in [0, in_w).
    b.first[q] = std::min(b.row_len, ceil_div(std::max<int64_t>(0, c.padding_w - q), c.stride_w));
    b.end[q] = std::max(b.first[q],
                        std::min(b.row_len, ceil_div(std::max<int64_t>(0, c.padding_w + c.in_w - q), c.stride_w)));
  }
  return true;
}

// Plane columns [t0, t1) of column phase q, from input row `src`, promoted.
void copy_columns(const Depthwise& c, const float* src, int64_t step, int64_t q, int64_t t0, int64_t t1,
                  double* row) {
  const float* from = src + (q + t0 * c.stride_w - c.padding_w) * step;
  const int64_t from_step = c.stride_w * step;
  double* to = row + t0;
  const int64_t count = t1 - t0;
  int64_t t = 0;
  if (from_step == 1) {
    const DD dd;
    const DH dh;
    for (; t + lanes() <= count; t += lanes()) hn::StoreU(hn::PromoteTo(dd, hn::LoadU(dh, from + t)), dd, to + t);
  }
  for (; t < count; ++t) to[t] = from[t * from_step];
}

// The input columns of one padded row (input row `src`, column iw at
// src[iw * step]) into the stride_w column planes of its row phase
// (`plane_size` apart). Padding columns are never written: they stay 0.0.
void fill_row(const Depthwise& c, const BandLayout& b, const float* src, int64_t step, double* dst) {
  if (c.stride_w == 2 && step == 1) {
    // Both phases at once from pairs of neighbouring input columns
    // (2t - padding_w, 2t - padding_w + 1), where both lie in the input.
    const DD dd;
    const DH dh;
    const int64_t n = lanes();
    const int64_t pairs_begin = std::max(b.first[0], b.first[1]);
    const int64_t pairs_end = std::max(pairs_begin, std::min(b.end[0], b.end[1]));
    int64_t t = pairs_begin;
    for (; t + n <= pairs_end; t += n) {
      hn::Vec<DH> even, odd;
      hn::LoadInterleaved2(dh, src + 2 * t - c.padding_w, even, odd);
      hn::StoreU(hn::PromoteTo(dd, even), dd, dst + t);
      hn::StoreU(hn::PromoteTo(dd, odd), dd, dst + b.plane_size + t);
    }
    for (int64_t q = 0; q < 2; ++q) {
      double* row = dst + q * b.plane_size;
      copy_columns(c, src, step, q, b.first[q], std::min(b.end[q], pairs_begin), row);
      copy_columns(c, src, step, q, std::max(b.first[q], t), b.end[q], row);
    }
    return;
  }
  for (int64_t q = 0; q < c.stride_w; ++q) copy_columns(c, src, step, q, b.first[q], b.end[q], dst + q * b.plane_size);
}

// The input rows of one band: padded rows [pr0, pr0 + stride_h * plane_rows)
// of one input plane. The band starts all zero, and every plane of the
// same band position writes the same values, so padding stays 0.0.
void fill_band(const Depthwise& c, const BandLayout& b, const float* plane, int64_t pr0, double* band) {
  for (int64_t r = 0; r < c.stride_h * b.plane_rows; ++r) {
    const int64_t ih = pr0 + r - c.padding_h;
    if (ih < 0 || ih >= c.in_h) continue;
    double* dst = band + (r % c.stride_h) * c.stride_w * b.plane_size + (r / c.stride_h) * b.row_len;
    fill_row(c, b, plane + ih * c.input_strides[2], c.input_strides[3], dst);
  }
}

// The taps in (kernel row, kernel column) order: where each tap's input
// sits relative to an output's flat index, and one output channel's weights.
struct Taps {
  int64_t count;
  int64_t offset[kMaxTaps];
  double weight[kMaxTaps];
};

void tap_offsets(const Depthwise& c, const BandLayout& b, Taps& taps) {
  taps.count = 0;
  for (int64_t kh = 0; kh < c.kernel_h; ++kh)
    for (int64_t kw = 0; kw < c.kernel_w; ++kw) {
      const int64_t row = kh * c.dilation_h, col = kw * c.dilation_w;
      const int64_t plane = (row % c.stride_h) * c.stride_w + col % c.stride_w;
      taps.offset[taps.count++] = plane * b.plane_size + row / c.stride_h * b.row_len + col / c.stride_w;
    }
}

void tap_weights(const Depthwise& c, int64_t oc, Taps& taps) {
  const float* w = c.weight + oc * c.weight_strides[0];
  int64_t t = 0;
  for (int64_t kh = 0; kh < c.kernel_h; ++kh)
    for (int64_t kw = 0; kw < c.kernel_w; ++kw)
      taps.weight[t++] = w[kh * c.weight_strides[2] + kw * c.weight_strides[3]];
}

// G vectors of outputs from flat index q: from +0.0, each tap's
// input * weight in order (float64), then the bias; rounded to float32.
template <int G>
void compute_vectors(const double* band, const Taps& taps, const float* bias, int64_t q, float* out) {
  const DD d;
  const DH dh;
  const int64_t n = lanes();
  VD sum[G];
  for (int g = 0; g < G; ++g) sum[g] = hn::Zero(d);
  for (int64_t t = 0; t < taps.count; ++t) {
    const VD w = hn::Set(d, taps.weight[t]);
    const double* in = band + taps.offset[t] + q;
    for (int g = 0; g < G; ++g) sum[g] = hn::Add(sum[g], hn::Mul(hn::LoadU(d, in + g * n), w));
  }
  if (bias != nullptr)
    for (int g = 0; g < G; ++g) sum[g] = hn::Add(sum[g], hn::Set(d, static_cast<double>(*bias)));
  for (int g = 0; g < G; ++g) hn::StoreU(DemoteToFloat(dh, sum[g]), dh, out + q + g * n);
}

template <int G>
void compute_last_vectors(int64_t count, const double* band, const Taps& taps, const float* bias, int64_t q,
                          float* out) {
  if constexpr (G > 1) {
    if (count < G) return compute_last_vectors<G - 1>(count, band, taps, bias, q, out);
  }
  compute_vectors<G>(band, taps, bias, q, out);
}

// Output rows [oh0, oh0 + rows) of one output channel from its band.
void compute_band(const Depthwise& c, const BandLayout& b, const double* band, const Taps& taps, const float* bias,
                  int64_t oh0, int64_t rows, float* staging, float* out_plane) {
  const int64_t n = lanes();
  const int64_t vectors = ceil_div(rows * b.row_len, n);
  int64_t v = 0;
  for (; v + kGroup <= vectors; v += kGroup) compute_vectors<kGroup>(band, taps, bias, v * n, staging);
  if (v < vectors) compute_last_vectors<kGroup>(vectors - v, band, taps, bias, v * n, staging);
  const hn::ScalableTag<float> d;
  const int64_t float_lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t r = 0; r < rows; ++r) {
    const float* from = staging + r * b.row_len;
    float* to = out_plane + (oh0 + r) * c.out_strides[2];
    int64_t ow = 0;
    if (c.out_strides[3] == 1)
      for (; ow + float_lanes <= c.out_w; ow += float_lanes) hn::StoreU(hn::LoadU(d, from + ow), d, to + ow);
    for (; ow < c.out_w; ++ow) to[ow * c.out_strides[3]] = from[ow];
  }
}

}  // namespace

bool DepthwiseConvolution(const Depthwise& c) {
  BandLayout b;
  if (!plan_band(c, b)) return false;
  HWY_ALIGN double band[kBandValues];
  HWY_ALIGN float staging[kOutFloats];
  Taps taps;
  tap_offsets(c, b, taps);
  for (int64_t oh0 = 0; oh0 < c.out_h; oh0 += b.out_rows) {
    const int64_t rows = std::min(b.out_rows, c.out_h - oh0);
    std::fill(band, band + c.stride_h * c.stride_w * b.plane_size, 0.0);
    for (int64_t n = 0; n < c.batch; ++n)
      for (int64_t ic = 0; ic < c.channels; ++ic) {
        fill_band(c, b, c.input + n * c.input_strides[0] + ic * c.input_strides[1], oh0 * c.stride_h, band);
        for (int64_t m = 0; m < c.multiplier; ++m) {
          const int64_t oc = ic * c.multiplier + m;
          tap_weights(c, oc, taps);
          compute_band(c, b, band, taps, c.bias != nullptr ? c.bias + oc * c.bias_stride : nullptr, oh0, rows,
                       staging, c.out + n * c.out_strides[0] + oc * c.out_strides[1]);
        }
      }
  }
  return true;
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::portable::detail)

#if HWY_ONCE
namespace et_ops::kernels::portable::detail {

HWY_EXPORT(DepthwiseConvolution);

bool depthwise_convolution(const Depthwise& convolution) {
  return HWY_DYNAMIC_DISPATCH(DepthwiseConvolution)(convolution);
}

}  // namespace et_ops::kernels::portable::detail
#endif  // HWY_ONCE
