// mixed_mm.out and mixed_linear.out (reference §7): float input times an
// int8 weight with per-row (mm) or per-output-channel, optionally grouped
// (linear) scales, in ExecuTorch's loop order with c10 Half arithmetic.
//
// The all-f32 and all-f16 cases run Highway kernels (dynamic dispatch: this
// file is compiled once per SIMD target through foreach_target.h). They
// vectorise across output columns only, so every output element still sees
// exactly the reference sequence of roundings, k ascending, no FMA; the f16
// kernels need F16C for exact binary16 rounding and decline elsewhere.
// Every other dtype combination runs the plain reference loop.
#define HWY_TARGET_INCLUDE "mixed.cpp"
#include "common/hwy_per_target.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <type_traits>

#include "checks.h"
#include "et_ops/kernels/quantized.h"

#ifndef ET_OPS_QUANTIZED_MIXED_SHARED
#define ET_OPS_QUANTIZED_MIXED_SHARED
namespace et_ops::kernels::quantized::mixed {

// A strided 2-D view: element (r, c) is data[r * row_stride + c * col_stride].
template <typename T>
struct Matrix {
  T* data;
  int64_t row_stride;
  int64_t col_stride;
  T& at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

// out[m, p] = x[m, n] @ (W[n, p] * s[n] per row of W), all f32.
struct MmF32 {
  Matrix<const float> x;
  Matrix<const int8_t> w;
  Matrix<const float> scales;  // s[k] at (k, 0)
  Matrix<float> out;
  int64_t m, n, p;
};

// out[m, p] = x[m, n] @ W[p, n]^T with s[j][k / group_size], all f32.
struct LinearF32 {
  Matrix<const float> x;
  Matrix<const int8_t> w;
  Matrix<const float> scales;  // s[j][group]; col_stride 0 for 1-D scales
  int64_t group_size;
  Matrix<float> out;
  int64_t m, n, p;
};

// mixed_mm with float16 input, scales and out (every step rounds to f16).
struct MmF16 {
  Matrix<const Half> x;
  Matrix<const int8_t> w;
  Matrix<const Half> scales;  // s[k] at (k, 0)
  Matrix<Half> out;
  int64_t m, n, p;
};

// mixed_linear with float16 input, scales and out.
struct LinearF16 {
  Matrix<const Half> x;
  Matrix<const int8_t> w;
  Matrix<const Half> scales;  // s[j][group]; col_stride 0 for 1-D scales
  int64_t group_size;
  Matrix<Half> out;
  int64_t m, n, p;
};

}  // namespace et_ops::kernels::quantized::mixed
#endif  // ET_OPS_QUANTIZED_MIXED_SHARED

// ---- per-target f32 kernels ----
ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::quantized::mixed)

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Blocking: a micro-tile is up to kTileRows rows by two vectors of columns
// (a "panel"); kRowBlock rows share one packed weight panel of kDepthBlock
// reduction steps. At most about 34 KiB of stack at AVX-512 widths.
constexpr int64_t kTileRows = 4;
constexpr int64_t kRowBlock = 64;
constexpr int64_t kDepthBlock = 128;
constexpr int64_t kMaxGroupsPerBlock = 16;
constexpr int64_t kMaxPanel = 2 * static_cast<int64_t>(hn::MaxLanes(DF()));

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(DF())); }
int64_t panel_width() { return 2 * lanes(); }

// The input rows of one micro-tile.
struct TileRows {
  const float* row[kTileRows];
  int64_t col_stride;

  TileRows(const Matrix<const float>& x, int64_t first, int64_t count) : row{}, col_stride(x.col_stride) {
    for (int64_t r = 0; r < count; ++r) row[r] = &x.at(first + r, 0);
  }
  VF broadcast(int64_t r, int64_t k) const { return hn::Set(DF(), row[r][k * col_stride]); }
};

// ---- packing: panel[k][c] = float(W at reduction index k0 + k, output
// column j0 + c); columns past `cols` are zero ----

void pack_zero_tail(int64_t depth, int64_t cols, float* panel) {
  const int64_t width = panel_width();
  for (int64_t k = 0; k < depth; ++k) std::fill(panel + k * width + cols, panel + (k + 1) * width, 0.0f);
}

// mixed_mm's weight is [n, p]: panel rows are (parts of) weight rows.
void pack_mm_panel(const Matrix<const int8_t>& w, int64_t k0, int64_t depth, int64_t j0, int64_t cols,
                   float* panel) {
  const int64_t width = panel_width();
  if (w.col_stride == 1 && cols == width) {
    const DF d;
    const hn::Rebind<int8_t, DF> d8;
    const hn::Rebind<int32_t, DF> d32;
    for (int64_t k = 0; k < depth; ++k) {
      const int8_t* src = &w.at(k0 + k, j0);
      hn::Store(hn::ConvertTo(d, hn::PromoteTo(d32, hn::LoadU(d8, src))), d, panel + k * width);
      hn::Store(hn::ConvertTo(d, hn::PromoteTo(d32, hn::LoadU(d8, src + lanes()))), d, panel + k * width + lanes());
    }
    return;
  }
  for (int64_t k = 0; k < depth; ++k)
    for (int64_t c = 0; c < cols; ++c) panel[k * width + c] = static_cast<float>(w.at(k0 + k, j0 + c));
  pack_zero_tail(depth, cols, panel);
}

// mixed_linear's weight is [p, n]: panel columns are (parts of) weight rows.
// With unit-stride rows, one 32-bit gather per lane fetches four consecutive
// bytes of its row, i.e. four panel rows at once.
void pack_linear_panel(const Matrix<const int8_t>& w, int64_t k0, int64_t depth, int64_t j0, int64_t cols,
                       float* panel) {
  const int64_t width = panel_width();
  int64_t k = 0;
  if (w.col_stride == 1 && cols == width && (width - 1) * w.row_stride <= INT32_MAX) {
    const DF d;
    const hn::RebindToSigned<DF> di;
    HWY_ALIGN int32_t row_offsets[kMaxPanel];
    for (int64_t c = 0; c < lanes(); ++c) row_offsets[c] = static_cast<int32_t>(c * w.row_stride);
    const auto offsets = hn::Load(di, row_offsets);
    for (; k + 4 <= depth; k += 4)
      for (int64_t half = 0; half < 2; ++half) {
        // Lane c holds bytes k0+k .. k0+k+3 of row j0 + half * lanes + c, all inside the row.
        const auto* base = reinterpret_cast<const int32_t*>(&w.at(j0 + half * lanes(), k0 + k));
        const auto bytes = hn::GatherOffset(di, base, offsets);
        float* dst = panel + k * width + half * lanes();
        hn::Store(hn::ConvertTo(d, hn::ShiftRight<24>(hn::ShiftLeft<24>(bytes))), d, dst);
        hn::Store(hn::ConvertTo(d, hn::ShiftRight<24>(hn::ShiftLeft<16>(bytes))), d, dst + width);
        hn::Store(hn::ConvertTo(d, hn::ShiftRight<24>(hn::ShiftLeft<8>(bytes))), d, dst + 2 * width);
        hn::Store(hn::ConvertTo(d, hn::ShiftRight<24>(bytes)), d, dst + 3 * width);
      }
  }
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t kk = k; kk < depth; ++kk) panel[kk * width + c] = static_cast<float>(w.at(j0 + c, k0 + kk));
  pack_zero_tail(depth, cols, panel);
}

void store_tile(const float* tile, int64_t i0, int64_t rows, int64_t j0, int64_t cols, const Matrix<float>& out) {
  const int64_t width = panel_width();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out.at(i0 + r, j0 + c) = tile[r * width + c];
}

// One tile row's two accumulator vectors, loaded from and stored to a
// row of `width` floats (possibly a row of out: unaligned).
HWY_INLINE void load_row(const float* p, VF& lo, VF& hi) {
  lo = hn::LoadU(DF(), p);
  hi = hn::LoadU(DF(), p + lanes());
}
HWY_INLINE void store_row(VF lo, VF hi, float* p) {
  hn::StoreU(lo, DF(), p);
  hn::StoreU(hi, DF(), p + lanes());
}

// ---- mixed_mm: acc = fl32(acc + fl32(fl32(x * w) * s[k])) ----

HWY_INLINE void mm_step(VF x, VF w0, VF w1, VF s, VF& lo, VF& hi) {
  lo = hn::Add(lo, hn::Mul(hn::Mul(x, w0), s));
  hi = hn::Add(hi, hn::Mul(hn::Mul(x, w1), s));
}

// The accumulators of a micro-tile: rows of a panel's width, `row_stride`
// floats apart.
struct AccTile {
  float* data;
  int64_t row_stride;
  float* row(int64_t r) const { return data + r * row_stride; }
};

// Rows [0, R) of a micro-tile over depth steps [k0, k0 + depth).
template <int R>
void mm_tile(const TileRows& x, const float* panel, const float* scales, int64_t scale_stride, int64_t k0,
             int64_t depth, AccTile acc) {
  const DF d;
  const int64_t width = panel_width();
  VF a0 = hn::Zero(d), b0 = a0, a1 = a0, b1 = a0, a2 = a0, b2 = a0, a3 = a0, b3 = a0;
  load_row(acc.row(0), a0, b0);
  if constexpr (R > 1) load_row(acc.row(1), a1, b1);
  if constexpr (R > 2) load_row(acc.row(2), a2, b2);
  if constexpr (R > 3) load_row(acc.row(3), a3, b3);
  for (int64_t k = k0; k < k0 + depth; ++k) {
    const VF w0 = hn::Load(d, panel + (k - k0) * width), w1 = hn::Load(d, panel + (k - k0) * width + lanes());
    const VF s = hn::Set(d, scales[k * scale_stride]);
    mm_step(x.broadcast(0, k), w0, w1, s, a0, b0);
    if constexpr (R > 1) mm_step(x.broadcast(1, k), w0, w1, s, a1, b1);
    if constexpr (R > 2) mm_step(x.broadcast(2, k), w0, w1, s, a2, b2);
    if constexpr (R > 3) mm_step(x.broadcast(3, k), w0, w1, s, a3, b3);
  }
  store_row(a0, b0, acc.row(0));
  if constexpr (R > 1) store_row(a1, b1, acc.row(1));
  if constexpr (R > 2) store_row(a2, b2, acc.row(2));
  if constexpr (R > 3) store_row(a3, b3, acc.row(3));
}

void mm_tile_rows(int64_t count, const TileRows& x, const float* panel, const float* scales, int64_t scale_stride,
                  int64_t k0, int64_t depth, AccTile acc) {
  switch (count) {
    case 1: mm_tile<1>(x, panel, scales, scale_stride, k0, depth, acc); break;
    case 2: mm_tile<2>(x, panel, scales, scale_stride, k0, depth, acc); break;
    case 3: mm_tile<3>(x, panel, scales, scale_stride, k0, depth, acc); break;
    default: mm_tile<4>(x, panel, scales, scale_stride, k0, depth, acc); break;
  }
}

// The f32 accumulator of mixed_mm is the output value itself, so partial
// sums live in out between depth blocks: the weight is then read row by row
// (depth block outside, panels inside), which keeps its reads sequential.
// A tile out cannot hold directly (a partial panel, or out not contiguous
// along its rows) is staged through `staging`.
void mm_panel_tiles(const MmF32& a, const float* panel, int64_t i0, int64_t rows, int64_t k0, int64_t depth,
                    int64_t j0, int64_t cols, float* staging) {
  const int64_t width = panel_width();
  const bool direct = a.out.col_stride == 1 && cols == width;
  for (int64_t r = 0; r < rows; r += kTileRows) {
    const int64_t count = std::min(kTileRows, rows - r);
    const TileRows x(a.x, i0 + r, count);
    if (direct) {
      mm_tile_rows(count, x, panel, a.scales.data, a.scales.row_stride, k0, depth,
                   AccTile{&a.out.at(i0 + r, j0), a.out.row_stride});
      continue;
    }
    for (int64_t t = 0; t < count; ++t)
      for (int64_t c = 0; c < width; ++c) staging[t * width + c] = c < cols ? a.out.at(i0 + r + t, j0 + c) : 0.0f;
    mm_tile_rows(count, x, panel, a.scales.data, a.scales.row_stride, k0, depth, AccTile{staging, width});
    for (int64_t t = 0; t < count; ++t)
      for (int64_t c = 0; c < cols; ++c) a.out.at(i0 + r + t, j0 + c) = staging[t * width + c];
  }
}

void MixedMmF32(const MmF32& a) {
  HWY_ALIGN float panel[kDepthBlock * kMaxPanel];
  HWY_ALIGN float staging[kTileRows * kMaxPanel];
  const int64_t width = panel_width();
  for (int64_t i0 = 0; i0 < a.m; i0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, a.m - i0);
    for (int64_t i = i0; i < i0 + rows; ++i)
      for (int64_t j = 0; j < a.p; ++j) a.out.at(i, j) = 0.0f;
    for (int64_t k0 = 0; k0 < a.n; k0 += kDepthBlock) {
      const int64_t depth = std::min(kDepthBlock, a.n - k0);
      for (int64_t j0 = 0; j0 < a.p; j0 += width) {
        const int64_t cols = std::min(width, a.p - j0);
        pack_mm_panel(a.w, k0, depth, j0, cols, panel);
        mm_panel_tiles(a, panel, i0, rows, k0, depth, j0, cols, staging);
      }
    }
  }
}

// ---- float16 mixed_mm (reference §1.5, §7.2): per step
// t = f16(x * w), t = f16(t * s[k]), acc = f16(acc + t). The lanes hold
// binary16 values widened to f32; rounding to binary16 is a demotion and a
// promotion. Highway demotes with round-to-nearest-even and overflow to
// infinity only through F16C (x86 AVX2 and up); its SSE4 emulation
// truncates, so other targets decline and the caller runs the scalar loop. ----

constexpr bool kExactF16Demotion = HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2;

HWY_INLINE VF round_to_f16(VF v) {
  const hn::Rebind<hwy::float16_t, DF> dh;
  return hn::PromoteTo(DF(), hn::DemoteTo(dh, v));
}

float round_to_f16(float v) { return Half::from_float(v).to_float(); }

// Columns [j0, j0 + cols) of output row i, accumulated in `acc`.
void mm_f16_row_block(const MmF16& a, int64_t i, int64_t j0, int64_t cols, float* acc) {
  const DF d;
  const hn::Rebind<int8_t, DF> d8;
  const hn::Rebind<int32_t, DF> d32;
  const int64_t vector_cols = cols / lanes() * lanes();
  std::fill(acc, acc + cols, 0.0f);
  for (int64_t k = 0; k < a.n; ++k) {
    const float x = a.x.at(i, k).to_float();
    const float s = a.scales.at(k, 0).to_float();
    const int8_t* w = &a.w.at(k, j0);
    const VF vx = hn::Set(d, x);
    const VF vs = hn::Set(d, s);
    for (int64_t c = 0; c < vector_cols; c += lanes()) {
      const VF wv = hn::ConvertTo(d, hn::PromoteTo(d32, hn::LoadU(d8, w + c)));
      const VF t = round_to_f16(hn::Mul(round_to_f16(hn::Mul(vx, wv)), vs));
      hn::Store(round_to_f16(hn::Add(hn::Load(d, acc + c), t)), d, acc + c);
    }
    for (int64_t c = vector_cols; c < cols; ++c)
      acc[c] = round_to_f16(acc[c] + round_to_f16(round_to_f16(x * static_cast<float>(w[c])) * s));
  }
  for (int64_t c = 0; c < cols; ++c) a.out.at(i, j0 + c) = Half::from_float(acc[c]);  // exact
}

// False when this target cannot round to binary16 exactly, or the weight
// rows are not contiguous: the caller then runs the scalar loop.
bool MixedMmF16(const MmF16& a) {
  if (!kExactF16Demotion || a.w.col_stride != 1) return false;
  // Column blocks keep a block of each weight row and the accumulators in cache.
  constexpr int64_t kColumnBlock = 512;
  HWY_ALIGN float acc[kColumnBlock];
  for (int64_t j0 = 0; j0 < a.p; j0 += kColumnBlock)
    for (int64_t i = 0; i < a.m; ++i) mm_f16_row_block(a, i, j0, std::min(kColumnBlock, a.p - j0), acc);
  return true;
}

// ---- mixed_linear: psum = fl32(psum + fl32(x * w)); at each group end
// sum = fl32(sum + fl32(psum * s[j][group])), psum = 0 ----

// The running sums of a row block: psum and sum, kRowBlock x width each.
struct LinearState {
  float* psum;
  float* sum;
};

// Where a depth block sits among the groups, and the packed scales of the
// groups from `first_group` on.
struct GroupSpan {
  const float* scales;
  int64_t first_group;
  int64_t group_size;
  int64_t n;
};

HWY_INLINE void psum_step(VF x, VF w0, VF w1, VF& lo, VF& hi) {
  lo = hn::Add(lo, hn::Mul(x, w0));
  hi = hn::Add(hi, hn::Mul(x, w1));
}

HWY_INLINE void flush_group(VF g0, VF g1, VF& psum_lo, VF& psum_hi, VF& sum_lo, VF& sum_hi) {
  sum_lo = hn::Add(sum_lo, hn::Mul(psum_lo, g0));
  sum_hi = hn::Add(sum_hi, hn::Mul(psum_hi, g1));
  psum_lo = hn::Zero(DF());
  psum_hi = hn::Zero(DF());
}

// Rows [0, R) of a micro-tile over depth steps [k0, k0 + depth).
template <int R>
void linear_tile(const TileRows& x, const float* panel, const GroupSpan& groups, int64_t k0, int64_t depth,
                 LinearState state) {
  const DF d;
  const int64_t width = panel_width();
  VF p0 = hn::Zero(d), q0 = p0, p1 = p0, q1 = p0, p2 = p0, q2 = p0, p3 = p0, q3 = p0;  // psum
  VF s0 = p0, t0 = p0, s1 = p0, t1 = p0, s2 = p0, t2 = p0, s3 = p0, t3 = p0;           // sum
  load_row(state.psum, p0, q0);
  load_row(state.sum, s0, t0);
  if constexpr (R > 1) load_row(state.psum + width, p1, q1), load_row(state.sum + width, s1, t1);
  if constexpr (R > 2) load_row(state.psum + 2 * width, p2, q2), load_row(state.sum + 2 * width, s2, t2);
  if constexpr (R > 3) load_row(state.psum + 3 * width, p3, q3), load_row(state.sum + 3 * width, s3, t3);
  for (int64_t k = k0; k < k0 + depth;) {
    const int64_t group = k / groups.group_size;
    const int64_t group_end = std::min((group + 1) * groups.group_size, groups.n);
    const int64_t stop = std::min(group_end, k0 + depth);
    for (; k < stop; ++k) {
      const VF w0 = hn::Load(d, panel + (k - k0) * width), w1 = hn::Load(d, panel + (k - k0) * width + lanes());
      psum_step(x.broadcast(0, k), w0, w1, p0, q0);
      if constexpr (R > 1) psum_step(x.broadcast(1, k), w0, w1, p1, q1);
      if constexpr (R > 2) psum_step(x.broadcast(2, k), w0, w1, p2, q2);
      if constexpr (R > 3) psum_step(x.broadcast(3, k), w0, w1, p3, q3);
    }
    if (k == group_end) {
      const float* g = groups.scales + (group - groups.first_group) * width;
      const VF g0 = hn::Load(d, g), g1 = hn::Load(d, g + lanes());
      flush_group(g0, g1, p0, q0, s0, t0);
      if constexpr (R > 1) flush_group(g0, g1, p1, q1, s1, t1);
      if constexpr (R > 2) flush_group(g0, g1, p2, q2, s2, t2);
      if constexpr (R > 3) flush_group(g0, g1, p3, q3, s3, t3);
    }
  }
  store_row(p0, q0, state.psum);
  store_row(s0, t0, state.sum);
  if constexpr (R > 1) store_row(p1, q1, state.psum + width), store_row(s1, t1, state.sum + width);
  if constexpr (R > 2) store_row(p2, q2, state.psum + 2 * width), store_row(s2, t2, state.sum + 2 * width);
  if constexpr (R > 3) store_row(p3, q3, state.psum + 3 * width), store_row(s3, t3, state.sum + 3 * width);
}

void linear_tile_rows(int64_t count, const TileRows& x, const float* panel, const GroupSpan& groups, int64_t k0,
                      int64_t depth, LinearState state) {
  switch (count) {
    case 1: linear_tile<1>(x, panel, groups, k0, depth, state); break;
    case 2: linear_tile<2>(x, panel, groups, k0, depth, state); break;
    case 3: linear_tile<3>(x, panel, groups, k0, depth, state); break;
    default: linear_tile<4>(x, panel, groups, k0, depth, state); break;
  }
}

// A depth block never spans more than kMaxGroupsPerBlock groups, so their
// scales fit the packed scale panel.
int64_t linear_depth(const LinearF32& a, int64_t k0) {
  const int64_t group_limit = (k0 / a.group_size + kMaxGroupsPerBlock) * a.group_size;
  return std::min({kDepthBlock, a.n - k0, group_limit - k0});
}

void pack_group_scales(const LinearF32& a, int64_t first_group, int64_t last_group, int64_t j0, int64_t cols,
                       float* group_scales) {
  const int64_t width = panel_width();
  for (int64_t g = first_group; g <= last_group; ++g) {
    float* row = group_scales + (g - first_group) * width;
    for (int64_t c = 0; c < cols; ++c) row[c] = a.scales.at(j0 + c, g);
    std::fill(row + cols, row + width, 0.0f);
  }
}

void MixedLinearF32(const LinearF32& a) {
  HWY_ALIGN float panel[kDepthBlock * kMaxPanel];
  HWY_ALIGN float group_scales[kMaxGroupsPerBlock * kMaxPanel];
  HWY_ALIGN float psum[kRowBlock * kMaxPanel];
  HWY_ALIGN float sum[kRowBlock * kMaxPanel];
  const int64_t width = panel_width();
  for (int64_t i0 = 0; i0 < a.m; i0 += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, a.m - i0);
    for (int64_t j0 = 0; j0 < a.p; j0 += width) {
      const int64_t cols = std::min(width, a.p - j0);
      std::fill(psum, psum + rows * width, 0.0f);
      std::fill(sum, sum + rows * width, 0.0f);
      for (int64_t k0 = 0; k0 < a.n;) {
        const int64_t depth = linear_depth(a, k0);
        const GroupSpan groups{group_scales, k0 / a.group_size, a.group_size, a.n};
        pack_linear_panel(a.w, k0, depth, j0, cols, panel);
        pack_group_scales(a, groups.first_group, (k0 + depth - 1) / a.group_size, j0, cols, group_scales);
        for (int64_t r = 0; r < rows; r += kTileRows) {
          const int64_t count = std::min(kTileRows, rows - r);
          linear_tile_rows(count, TileRows(a.x, i0 + r, count), panel, groups, k0, depth,
                           LinearState{psum + r * width, sum + r * width});
        }
        k0 += depth;
      }
      store_tile(sum, i0, rows, j0, cols, a.out);
    }
  }
}

// ---- float16 mixed_linear (reference §1.5, §7.3, U = T = f16): per step
// psum = f16(psum + f16(x * w)); at each group end
// sum = f16(sum + f16(psum * s[j][group])), psum = 0 ----

constexpr int64_t kF16RowBlock = 16;

// Lane c of the two vectors: s[j0 + c][group] (1 past `cols`).
void load_group_scales(const LinearF16& a, int64_t group, int64_t j0, int64_t cols, VF& lo, VF& hi) {
  HWY_ALIGN float values[kMaxPanel];
  const int64_t width = panel_width();
  for (int64_t c = 0; c < width; ++c) values[c] = c < cols ? a.scales.at(j0 + c, group).to_float() : 1.0f;
  lo = hn::Load(DF(), values);
  hi = hn::Load(DF(), values + lanes());
}

// Row i over depth steps [k0, k0 + depth): the running sums psum and sum of
// the panel's columns live in `psum` and `sum` (a panel's width each).
void linear_f16_row(const LinearF16& a, int64_t i, const float* panel, int64_t k0, int64_t depth, int64_t j0,
                    int64_t cols, float* psum, float* sum) {
  const DF d;
  const int64_t width = panel_width();
  VF psum_lo, psum_hi, sum_lo, sum_hi;
  load_row(psum, psum_lo, psum_hi);
  load_row(sum, sum_lo, sum_hi);
  for (int64_t k = k0; k < k0 + depth; ++k) {
    const VF x = hn::Set(d, a.x.at(i, k).to_float());
    const float* w = panel + (k - k0) * width;
    psum_lo = round_to_f16(hn::Add(psum_lo, round_to_f16(hn::Mul(x, hn::Load(d, w)))));
    psum_hi = round_to_f16(hn::Add(psum_hi, round_to_f16(hn::Mul(x, hn::Load(d, w + lanes())))));
    if ((k + 1) % a.group_size != 0 && k + 1 != a.n) continue;
    VF scale_lo, scale_hi;
    load_group_scales(a, k / a.group_size, j0, cols, scale_lo, scale_hi);
    sum_lo = round_to_f16(hn::Add(sum_lo, round_to_f16(hn::Mul(psum_lo, scale_lo))));
    sum_hi = round_to_f16(hn::Add(sum_hi, round_to_f16(hn::Mul(psum_hi, scale_hi))));
    psum_lo = hn::Zero(d);
    psum_hi = hn::Zero(d);
  }
  store_row(psum_lo, psum_hi, psum);
  store_row(sum_lo, sum_hi, sum);
}

// False when this target cannot round to binary16 exactly, or the weight
// rows are not contiguous: the caller then runs the scalar loop.
bool MixedLinearF16(const LinearF16& a) {
  if (!kExactF16Demotion || a.w.col_stride != 1) return false;
  HWY_ALIGN float panel[kDepthBlock * kMaxPanel];
  HWY_ALIGN float psum[kF16RowBlock * kMaxPanel];
  HWY_ALIGN float sum[kF16RowBlock * kMaxPanel];
  const int64_t width = panel_width();
  for (int64_t j0 = 0; j0 < a.p; j0 += width) {
    const int64_t cols = std::min(width, a.p - j0);
    for (int64_t i0 = 0; i0 < a.m; i0 += kF16RowBlock) {
      const int64_t rows = std::min(kF16RowBlock, a.m - i0);
      std::fill(psum, psum + rows * width, 0.0f);
      std::fill(sum, sum + rows * width, 0.0f);
      for (int64_t k0 = 0; k0 < a.n; k0 += kDepthBlock) {
        const int64_t depth = std::min(kDepthBlock, a.n - k0);
        pack_linear_panel(a.w, k0, depth, j0, cols, panel);
        for (int64_t r = 0; r < rows; ++r)
          linear_f16_row(a, i0 + r, panel, k0, depth, j0, cols, psum + r * width, sum + r * width);
      }
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) a.out.at(i0 + r, j0 + c) = Half::from_float(sum[r * width + c]);  // exact
    }
  }
  return true;
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::quantized::mixed)

#if HWY_ONCE
namespace et_ops::kernels::quantized {
namespace mixed {
HWY_EXPORT(MixedMmF32);
HWY_EXPORT(MixedLinearF32);
HWY_EXPORT(MixedMmF16);
HWY_EXPORT(MixedLinearF16);
}  // namespace mixed

namespace {

using detail::check_dtype;
using detail::check_tensor;
using detail::fail;
using detail::shape_string;
using detail::Tag;
using detail::to_f32;
using mixed::Matrix;

// ---- c10 arithmetic (reference §1.5) ----
// Half op Half rounds to Half; Half op float is float; anything op double is
// double; `Half += float` rounds the float to Half first.

Half to_half(float v) { return Half::from_float(v); }

float mul(float a, float b) { return a * b; }
float mul(float a, Half b) { return a * b.to_float(); }
float mul(Half a, float b) { return a.to_float() * b; }
Half mul(Half a, Half b) { return to_half(a.to_float() * b.to_float()); }
double mul(double a, float b) { return a * static_cast<double>(b); }
double mul(double a, Half b) { return a * static_cast<double>(b.to_float()); }

void add_to(float& acc, float v) { acc = acc + v; }
void add_to(float& acc, Half v) { acc = acc + v.to_float(); }
void add_to(double& acc, double v) { acc = acc + v; }
void add_to(double& acc, float v) { acc = acc + static_cast<double>(v); }
void add_to(double& acc, Half v) { acc = acc + static_cast<double>(v.to_float()); }
void add_to(Half& acc, Half v) { acc = to_half(acc.to_float() + v.to_float()); }
void add_to(Half& acc, float v) { add_to(acc, to_half(v)); }

// An int8 weight as the input type U (exact in both f32 and f16).
template <typename U>
U weight_as(int8_t w) {
  if constexpr (std::is_same_v<U, Half>) return to_half(static_cast<float>(w));
  else return static_cast<float>(w);
}

template <typename T>
Matrix<T> matrix(TensorRef t) {
  return Matrix<T>{t.data_as<T>(), t.stride(0), t.dim() == 2 ? t.stride(1) : 0};
}

// ---- the reference loops, for every dtype combination ----

template <typename U>
void mixed_mm_reference(TensorRef input, TensorRef weight, TensorRef scales, TensorRef out) {
  const auto x = matrix<const U>(input);
  const auto w = matrix<const int8_t>(weight);
  const auto s = matrix<const U>(scales);
  const auto z = matrix<U>(out);
  for (int64_t i = 0; i < input.size(0); ++i)
    for (int64_t j = 0; j < weight.size(1); ++j) {
      U acc{};
      for (int64_t k = 0; k < input.size(1); ++k)
        add_to(acc, mul(mul(x.at(i, k), weight_as<U>(w.at(k, j))), s.at(k, 0)));
      z.at(i, j) = acc;
    }
}

template <typename U, typename T>
void mixed_linear_reference(TensorRef input, TensorRef weight, TensorRef scales, int64_t group_size, TensorRef out) {
  const auto x = matrix<const U>(input);
  const auto w = matrix<const int8_t>(weight);
  const auto s = matrix<const U>(scales);
  const auto z = matrix<T>(out);
  const int64_t n = input.size(1);
  for (int64_t i = 0; i < input.size(0); ++i)
    for (int64_t j = 0; j < weight.size(0); ++j) {
      T sum{};
      for (int64_t k = 0; k < n; k += group_size) {
        T psum{};
        for (int64_t k2 = k; k2 < std::min(k + group_size, n); ++k2)
          add_to(psum, mul(x.at(i, k2), weight_as<U>(w.at(j, k2))));
        add_to(sum, mul(psum, s.at(j, k / group_size)));
      }
      z.at(i, j) = sum;
    }
}

// ---- checks (§7.4, ET's order with ours interleaved) ----

// The structural promises (checks.h) of every tensor argument, before any
// of their sizes, strides or elements are used.
bool check_structures(KernelContext& ctx, const char* op, TensorRef input, TensorRef weight, TensorRef scales,
                      std::optional<TensorRef> zero_points, TensorRef out) {
  return check_tensor(ctx, op, "input", input) && check_tensor(ctx, op, "weight", weight) &&
         check_tensor(ctx, op, "weight_scales", scales) &&
         (!zero_points || check_tensor(ctx, op, "weight_zero_points", *zero_points)) &&
         check_tensor(ctx, op, "out", out);
}

bool check_ranks(KernelContext& ctx, const char* op, TensorRef input, TensorRef weight, TensorRef scales,
                 TensorRef out, int64_t max_scale_dim) {
  if (input.dim() != 2) return fail(ctx, op, "input must be 2-D, got shape {}", shape_string(input));
  if (weight.dim() != 2) return fail(ctx, op, "weight must be 2-D, got shape {}", shape_string(weight));
  if (out.dim() != 2) return fail(ctx, op, "out must be 2-D, got shape {}", shape_string(out));
  if (scales.dim() < 1 || scales.dim() > max_scale_dim)
    return fail(ctx, op, "weight_scales must be {}, got shape {}", max_scale_dim == 1 ? "1-D" : "1-D or 2-D",
                shape_string(scales));
  return true;
}

bool check_input_dtype(KernelContext& ctx, const char* op, TensorRef input) {
  if (input.dtype() == DType::Float32 || input.dtype() == DType::Float16) return true;
  return fail(ctx, op, "input must be float32 or float16, got {}", dtype_name(input.dtype()));
}

// Zero points are checked like ET (shape of the scales, dtype of the input),
// then rejected: ET does not implement them either.
bool check_no_zero_points(KernelContext& ctx, const char* op, TensorRef input, TensorRef scales,
                          std::optional<TensorRef> zero_points) {
  if (!zero_points) return true;
  if (!zero_points->same_shape(scales))
    return fail(ctx, op, "weight_zero_points has shape {}, expected {} (the shape of weight_scales)",
                shape_string(*zero_points), shape_string(scales));
  if (!check_dtype(ctx, op, "weight_zero_points", *zero_points, input.dtype())) return false;
  return fail(ctx, op, "weight_zero_points are not supported; pass None");
}

bool check_out_shape(KernelContext& ctx, const char* op, TensorRef out, int64_t m, int64_t p) {
  if (out.size(0) == m && out.size(1) == p) return true;
  return fail(ctx, op, "out has shape {}, expected [{}, {}]; outputs are never resized", shape_string(out), m, p);
}

bool check_scales_valid(KernelContext& ctx, const char* op, TensorRef scales) {
  const int64_t cols = scales.dim() == 2 ? scales.size(1) : 1;
  const int64_t col_stride = scales.dim() == 2 ? scales.stride(1) : 0;
  for (int64_t r = 0; r < scales.size(0); ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t offset = r * scales.stride(0) + c * col_stride;
      const float v = scales.dtype() == DType::Float16 ? to_f32(scales.data_as<const Half>()[offset])
                                                       : scales.data_as<const float>()[offset];
      if (!(std::isfinite(v) && v > 0.0f))
        return fail(ctx, op, "weight_scales[{}]{} = {} must be finite and > 0", r,
                    scales.dim() == 2 ? fmt::format("[{}]", c) : "", v);
    }
  return true;
}

bool check_mm(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef scales,
              std::optional<TensorRef> zero_points, TensorRef out) {
  if (!check_structures(ctx, op_name::mixed_mm_out, input, weight, scales, zero_points, out) ||
      !check_ranks(ctx, op_name::mixed_mm_out, input, weight, scales, out, 1))
    return false;
  if (input.size(1) != weight.size(0))
    return fail(ctx, op_name::mixed_mm_out, "input has {} columns but weight has {} rows", input.size(1), weight.size(0));
  if (scales.size(0) != weight.size(0))
    return fail(ctx, op_name::mixed_mm_out, "weight_scales has {} elements but weight has {} rows", scales.size(0), weight.size(0));
  if (scales.dtype() != input.dtype() || out.dtype() != input.dtype())
    return fail(ctx, op_name::mixed_mm_out, "input ({}), weight_scales ({}) and out ({}) must have the same dtype",
                dtype_name(input.dtype()), dtype_name(scales.dtype()), dtype_name(out.dtype()));
  if (!check_dtype(ctx, op_name::mixed_mm_out, "weight", weight, DType::Int8)) return false;
  if (!check_input_dtype(ctx, op_name::mixed_mm_out, input)) return false;
  if (!check_no_zero_points(ctx, op_name::mixed_mm_out, input, scales, zero_points)) return false;
  if (!check_out_shape(ctx, op_name::mixed_mm_out, out, input.size(0), weight.size(1))) return false;
  return check_scales_valid(ctx, op_name::mixed_mm_out, scales);
}

// Rows per group, or nullopt (error reported). With G groups ET uses
// g = ceil(n / G) but indexes the scales with a row stride of ceil(n / g),
// so we accept only the G for which the two agree (D23).
std::optional<int64_t> linear_group_size(KernelContext& ctx, TensorRef scales, int64_t n) {
  if (scales.dim() == 1 || n == 0) return std::max<int64_t>(n, 1);
  const int64_t groups = scales.size(1);
  if (groups < 1) {
    fail(ctx, op_name::mixed_linear_out, "weight_scales has shape {}: it needs at least one group per row", shape_string(scales));
    return std::nullopt;
  }
  const int64_t group_size = (n + groups - 1) / groups;
  if ((n + group_size - 1) / group_size != groups) {
    fail(ctx, op_name::mixed_linear_out,
         "weight_scales has {} groups per row, but {} input features split into groups of {} make {} groups",
         groups, n, group_size, (n + group_size - 1) / group_size);
    return std::nullopt;
  }
  return group_size;
}

std::optional<int64_t> check_linear(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef scales,
                                    std::optional<TensorRef> zero_points, std::optional<DType> dtype,
                                    TensorRef out) {
  if (!check_structures(ctx, op_name::mixed_linear_out, input, weight, scales, zero_points, out) ||
      !check_ranks(ctx, op_name::mixed_linear_out, input, weight, scales, out, 2))
    return std::nullopt;
  if (input.size(1) != weight.size(1)) {
    fail(ctx, op_name::mixed_linear_out, "input has {} columns but weight has {}", input.size(1), weight.size(1));
    return std::nullopt;
  }
  if (scales.size(0) != weight.size(0)) {
    fail(ctx, op_name::mixed_linear_out, "weight_scales has {} rows but weight has {}", scales.size(0), weight.size(0));
    return std::nullopt;
  }
  if (!check_dtype(ctx, op_name::mixed_linear_out, "weight_scales", scales, input.dtype())) return std::nullopt;
  if (dtype && *dtype != out.dtype()) {
    fail(ctx, op_name::mixed_linear_out, "out dtype {} does not match the requested dtype {}", dtype_name(out.dtype()),
         dtype_name(*dtype));
    return std::nullopt;
  }
  if (dtype && *dtype != DType::Float32 && *dtype != DType::Float16) {
    fail(ctx, op_name::mixed_linear_out, "dtype must be float32 or float16, got {}", dtype_name(*dtype));
    return std::nullopt;
  }
  if (!check_dtype(ctx, op_name::mixed_linear_out, "weight", weight, DType::Int8) || !check_input_dtype(ctx, op_name::mixed_linear_out, input) ||
      !check_no_zero_points(ctx, op_name::mixed_linear_out, input, scales, zero_points) ||
      !check_out_shape(ctx, op_name::mixed_linear_out, out, input.size(0), weight.size(0)))
    return std::nullopt;
  const DType t = out.dtype();
  if (t != DType::Float32 && t != DType::Float64 && t != DType::Float16) {
    fail(ctx, op_name::mixed_linear_out, "out must be float32, float64 or float16, got {}", dtype_name(t));
    return std::nullopt;
  }
  const std::optional<int64_t> group_size = linear_group_size(ctx, scales, input.size(1));
  if (!group_size || !check_scales_valid(ctx, op_name::mixed_linear_out, scales)) return std::nullopt;
  return group_size;
}

// Calls f(Tag<T>{}) for the float types of this family: f32, f16, f64.
template <typename F>
void dispatch_mixed_float(DType t, F&& f) {
  switch (t) {
    case DType::Float16: f(Tag<Half>{}); break;
    case DType::Float64: f(Tag<double>{}); break;
    default: f(Tag<float>{}); break;
  }
}

}  // namespace

bool mixed_mm_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                  std::optional<TensorRef> weight_zero_points, TensorRef out) {
  if (!check_mm(ctx, input, weight, weight_scales, weight_zero_points, out)) return false;
  if (out.numel() == 0) return true;
  if (input.dtype() == DType::Float16) {
    const mixed::MmF16 args{matrix<const Half>(input), matrix<const int8_t>(weight),
                            matrix<const Half>(weight_scales), matrix<Half>(out), input.size(0), input.size(1),
                            weight.size(1)};
    if (!HWY_DYNAMIC_DISPATCH(mixed::MixedMmF16)(args)) mixed_mm_reference<Half>(input, weight, weight_scales, out);
    return true;
  }
  const mixed::MmF32 args{matrix<const float>(input), matrix<const int8_t>(weight),
                          matrix<const float>(weight_scales), matrix<float>(out), input.size(0), input.size(1),
                          weight.size(1)};
  HWY_DYNAMIC_DISPATCH(mixed::MixedMmF32)(args);
  return true;
}

bool mixed_linear_out(KernelContext& ctx, TensorRef input, TensorRef weight, TensorRef weight_scales,
                      std::optional<TensorRef> weight_zero_points, std::optional<DType> dtype, TensorRef out) {
  const std::optional<int64_t> group_size =
      check_linear(ctx, input, weight, weight_scales, weight_zero_points, dtype, out);
  if (!group_size) return false;
  if (out.numel() == 0) return true;
  if (input.dtype() == DType::Float32 && out.dtype() == DType::Float32) {
    const mixed::LinearF32 args{matrix<const float>(input), matrix<const int8_t>(weight),
                                matrix<const float>(weight_scales), *group_size, matrix<float>(out),
                                input.size(0), input.size(1), weight.size(0)};
    HWY_DYNAMIC_DISPATCH(mixed::MixedLinearF32)(args);
    return true;
  }
  if (input.dtype() == DType::Float16 && out.dtype() == DType::Float16) {
    const mixed::LinearF16 args{matrix<const Half>(input), matrix<const int8_t>(weight),
                                matrix<const Half>(weight_scales), *group_size, matrix<Half>(out),
                                input.size(0), input.size(1), weight.size(0)};
    if (HWY_DYNAMIC_DISPATCH(mixed::MixedLinearF16)(args)) return true;
  }
  dispatch_mixed_float(input.dtype(), [&](auto u_tag) {
    dispatch_mixed_float(out.dtype(), [&](auto t_tag) {
      using U = typename decltype(u_tag)::type;
      using T = typename decltype(t_tag)::type;
      if constexpr (!std::is_same_v<U, double>)
        mixed_linear_reference<U, T>(input, weight, weight_scales, *group_size, out);
    });
  });
  return true;
}

}  // namespace et_ops::kernels::quantized
#endif  // HWY_ONCE
