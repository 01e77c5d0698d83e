// The blocked matrix product of gemm.h (float32 operands, float64 sums),
// compiled once per SIMD target (Highway's foreach_target) and chosen at
// run time.
//
// Blocking: the reduction is cut into blocks of at most kDepthBlock steps,
// processed in increasing order. Within a depth block, each panel of
// columns of b (V vectors of doubles wide) is packed once, promoted to
// float64 (zero beyond the last column and in a convolution's padding), and
// stays in the L1 cache while every tile of rows of a (promoted per tile)
// multiplies it; a tile keeps its R x V vectors of float64 sums in
// registers for the whole block. Between depth blocks the sums wait in a
// float64 scratch (one block of rows at a time, the panel loop outside the
// depth loop), so nothing is rounded to float32 before the last block adds
// the bias and rounds once.
#define HWY_TARGET_INCLUDE "gemm.cpp"
#include "common/hwy_per_target.h"

#include <algorithm>

#include "checks.h"
#include "gemm.h"
#include "vector_math-inl.h"

ET_OPS_HWY_NAMESPACE_BEGIN(et_ops::kernels::portable::detail)
// Internal linkage: the kernel files share this per-target namespace.
namespace {

using namespace simd::HWY_NAMESPACE;  // DD, VD, DH and DemoteToFloat

// Sums a tile keeps in registers: 12 of AVX2's 16 vector registers, 24 of
// AVX-512's 32 (the rest hold the panel's vectors and a broadcast).
#if HWY_TARGET <= HWY_AVX3
constexpr int kTileRows = 12;
#elif HWY_TARGET == HWY_SCALAR
// One lane, run only by x86-64 CPUs without SSSE3 (and the tests): small
// tiles keep its code small. A tile's shape never changes a sum's order.
constexpr int kTileRows = 2;
#else
constexpr int kTileRows = 6;
#endif
constexpr int kSums = 2 * kTileRows;
constexpr int64_t kDepthBlock = 256;
constexpr int64_t kMaxLanes = static_cast<int64_t>(hn::MaxLanes(DD()));
// Panels are at most 32 doubles wide (and at most 8 vectors).
constexpr int kMaxVectors = static_cast<int>(std::min<int64_t>(8, std::max<int64_t>(1, 32 / kMaxLanes)));
constexpr int64_t kMaxPanelWidth = kMaxVectors * kMaxLanes;
// Partial sums between depth blocks: a block of rows times one panel (512
// rows of the widest AVX-512 panel, 1024 with AVX2).
constexpr int64_t kPartialSums = 8192;

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(DD())); }

// dst[t] = src[t] promoted, for t < count.
void promote(const float* src, int64_t count, double* dst) {
  const DD dd;
  const DH dh;
  const int64_t n = lanes();
  int64_t t = 0;
  for (; t + n <= count; t += n) hn::StoreU(hn::PromoteTo(dd, hn::LoadU(dh, src + t)), dd, dst + t);
  for (; t < count; ++t) dst[t] = src[t];
}

// ---- the left operand ----

// Whether row i's reduction steps are one float apart: element k of the
// row at row + k.
bool lhs_is_contiguous(const GemmLhs& a) {
  const bool inner2 = a.sizes[2] == 1 || a.strides[2] == 1;
  const bool inner1 = a.sizes[1] == 1 || a.strides[1] == a.sizes[2];
  const bool outer = a.sizes[0] == 1 || a.strides[0] == a.sizes[1] * a.sizes[2];
  return inner2 && inner1 && outer;
}

// Walks the split reduction index (gemm.h, GemmLhs) one step at a time.
// A part of size 1 never moves, whatever its stride says.
class LhsIndex {
 public:
  LhsIndex(const GemmLhs& a, int64_t k) : sizes_{a.sizes[0], a.sizes[1], a.sizes[2]} {
    for (int d = 0; d < 3; ++d) strides_[d] = a.sizes[d] == 1 ? 0 : a.strides[d];
    const int64_t inner = a.sizes[1] * a.sizes[2];
    i_[0] = k / inner;
    i_[1] = k / a.sizes[2] % a.sizes[1];
    i_[2] = k % a.sizes[2];
    offset_ = i_[0] * strides_[0] + i_[1] * strides_[1] + i_[2] * strides_[2];
  }
  int64_t offset() const { return offset_; }
  void next() {
    offset_ += strides_[2];
    if (++i_[2] < sizes_[2]) return;
    offset_ += strides_[1] - i_[2] * strides_[2];
    i_[2] = 0;
    if (++i_[1] < sizes_[1]) return;
    offset_ += strides_[0] - i_[1] * strides_[1];
    i_[1] = 0;
    ++i_[0];
  }

 private:
  int64_t sizes_[3];
  int64_t strides_[3];
  int64_t i_[3];
  int64_t offset_;
};

// Rows [i0, i0 + rows) of a over reduction steps [k0, k0 + depth),
// promoted, row after row (`depth` doubles each).
void pack_lhs_tile(const GemmLhs& a, bool contiguous, int64_t i0, int64_t rows, int64_t k0, int64_t depth,
                   double* tile) {
  if (contiguous) {
    for (int64_t r = 0; r < rows; ++r) promote(a.data + (i0 + r) * a.row_stride + k0, depth, tile + r * depth);
    return;
  }
  LhsIndex index(a, k0);
  for (int64_t k = 0; k < depth; ++k, index.next()) {
    const float* column = a.data + i0 * a.row_stride + index.offset();
    for (int64_t r = 0; r < rows; ++r) tile[r * depth + k] = column[r * a.row_stride];
  }
}

// ---- transposing blocks of 8 x 8 (or 4 x 4) floats in registers ----

#if HWY_TARGET == HWY_SCALAR
// One lane: nothing to transpose; the caller copies float by float.
struct TransposedPart {
  int64_t cols, depth;
};
TransposedPart pack_transposed_blocks(const float*, int64_t, int64_t, int64_t, int64_t, double*) { return {0, 0}; }
#else

using DT = hn::CappedTag<float, 8>;
using VT = hn::Vec<DT>;
constexpr int64_t kTransposeLanes = static_cast<int64_t>(hn::MaxLanes(DT()));

HWY_INLINE VT interleave_pairs_lower(VT a, VT b) {
  const hn::Repartition<uint64_t, DT> d64;
  return hn::BitCast(DT(), hn::InterleaveLower(d64, hn::BitCast(d64, a), hn::BitCast(d64, b)));
}
HWY_INLINE VT interleave_pairs_upper(VT a, VT b) {
  const hn::Repartition<uint64_t, DT> d64;
  return hn::BitCast(DT(), hn::InterleaveUpper(d64, hn::BitCast(d64, a), hn::BitCast(d64, b)));
}

// rows[i] holds row i of a square block; afterwards it holds column i.
HWY_INLINE void transpose_block(VT* rows) {
  const DT d;
  if constexpr (kTransposeLanes == 4) {
    const VT t0 = hn::InterleaveLower(d, rows[0], rows[1]), t1 = hn::InterleaveUpper(d, rows[0], rows[1]);
    const VT t2 = hn::InterleaveLower(d, rows[2], rows[3]), t3 = hn::InterleaveUpper(d, rows[2], rows[3]);
    rows[0] = interleave_pairs_lower(t0, t2);
    rows[1] = interleave_pairs_upper(t0, t2);
    rows[2] = interleave_pairs_lower(t1, t3);
    rows[3] = interleave_pairs_upper(t1, t3);
  } else if constexpr (kTransposeLanes == 8) {
    // Within 128-bit blocks: 4 x 4 transposes of rows 0-3 and 4-7; then
    // the blocks' halves are exchanged.
    VT u[8];
    for (int half = 0; half < 2; ++half) {
      const VT* r = rows + 4 * half;
      const VT t0 = hn::InterleaveLower(d, r[0], r[1]), t1 = hn::InterleaveUpper(d, r[0], r[1]);
      const VT t2 = hn::InterleaveLower(d, r[2], r[3]), t3 = hn::InterleaveUpper(d, r[2], r[3]);
      u[4 * half + 0] = interleave_pairs_lower(t0, t2);
      u[4 * half + 1] = interleave_pairs_upper(t0, t2);
      u[4 * half + 2] = interleave_pairs_lower(t1, t3);
      u[4 * half + 3] = interleave_pairs_upper(t1, t3);
    }
    for (int i = 0; i < 4; ++i) {
      rows[i] = hn::ConcatLowerLower(d, u[4 + i], u[i]);
      rows[4 + i] = hn::ConcatUpperUpper(d, u[4 + i], u[i]);
    }
  }
}

// The block's floats of v at dst, promoted.
HWY_INLINE void store_promoted(VT v, double* dst) {
  const hn::Half<DT> dh;
  const hn::Rebind<double, decltype(dh)> dd;
  hn::StoreU(hn::PromoteTo(dd, hn::LowerHalf(dh, v)), dd, dst);
  hn::StoreU(hn::PromoteTo(dd, hn::UpperHalf(dh, v)), dd, dst + kTransposeLanes / 2);
}

// panel[k][c] = src[c * col_stride + k] for the first multiple of the
// block size of `cols` columns and of `depth` rows; returns those numbers
// of columns and rows (0 when the target's vectors are too narrow).
struct TransposedPart {
  int64_t cols, depth;
};

TransposedPart pack_transposed_blocks(const float* src, int64_t col_stride, int64_t depth, int64_t cols,
                                      int64_t width, double* panel) {
  const DT d;
  const int64_t n = kTransposeLanes;
  const TransposedPart part{cols / n * n, depth / n * n};
  VT rows[kTransposeLanes];
  for (int64_t c0 = 0; c0 < part.cols; c0 += n)
    for (int64_t k0 = 0; k0 < part.depth; k0 += n) {
      for (int64_t i = 0; i < n; ++i) rows[i] = hn::LoadU(d, src + (c0 + i) * col_stride + k0);
      transpose_block(rows);
      for (int64_t i = 0; i < n; ++i) store_promoted(rows[i], panel + (k0 + i) * width + c0);
    }
  return part;
}
#endif  // HWY_TARGET == HWY_SCALAR

// ---- the right operand: a panel of `depth` rows of `width` doubles,
// columns past `cols` zero ----

void pack_matrix_panel(const GemmMatrix& b, int64_t k0, int64_t depth, int64_t j0, int64_t cols, int64_t width,
                       double* panel) {
  const float* origin = b.data + k0 * b.row_stride + j0 * b.col_stride;
  if (b.col_stride == 1) {
    for (int64_t k = 0; k < depth; ++k) {
      double* dst = panel + k * width;
      promote(origin + k * b.row_stride, cols, dst);
      std::fill(dst + cols, dst + width, 0.0);
    }
    return;
  }
  // Strided columns (b is a transposed matrix, as linear's weight): blocks
  // transposed in registers, the rest float by float.
  TransposedPart done{0, 0};
  if (b.row_stride == 1) done = pack_transposed_blocks(origin, b.col_stride, depth, cols, width, panel);
  for (int64_t c = 0; c < cols; ++c) {
    const float* src = origin + c * b.col_stride;
    for (int64_t k = c < done.cols ? done.depth : 0; k < depth; ++k) panel[k * width + c] = src[k * b.row_stride];
  }
  for (int64_t k = 0; k < depth; ++k) std::fill(panel + k * width + cols, panel + (k + 1) * width, 0.0);
}

// A stretch of a panel's columns that lies on one output row.
struct PatchRun {
  int64_t oh, ow, count, column;
};

// Where one kernel row or column of a run reads. Rows: the input row's
// offset, or none in the padding. Columns: the run's columns [first, end)
// meet the input, the first of them at `offset`; the others are padding.
struct PatchRows {
  bool inside;
  int64_t offset;
};
struct PatchColumns {
  int64_t first, end, offset;
};

PatchRows patch_rows(const GemmPatches& p, const PatchRun& run, int64_t kh) {
  const int64_t ih = run.oh * p.stride_h - p.padding_h + kh * p.dilation_h;
  const bool inside = ih >= 0 && ih < p.in_h;
  return PatchRows{inside, inside ? ih * p.row_stride : 0};
}

PatchColumns patch_columns(const GemmPatches& p, const PatchRun& run, int64_t kw) {
  const int64_t iw = run.ow * p.stride_w - p.padding_w + kw * p.dilation_w;  // of the run's first column
  const int64_t first = std::min(run.count, iw >= 0 ? 0 : ceil_div(-iw, p.stride_w));
  // Columns left of the input's right edge.
  const int64_t inside = iw >= p.in_w ? 0 : floor_div(p.in_w - 1 - iw, p.stride_w) + 1;
  const int64_t end = std::max(first, std::min(run.count, inside));
  return PatchColumns{first, end, first < end ? (iw + first * p.stride_w) * p.col_stride : 0};
}

// dst[t] = src[t * step] promoted, for t < count.
void copy_strided(const float* src, int64_t step, int64_t count, double* dst) {
  if (step == 1) return promote(src, count, dst);
  int64_t t = 0;
  if (step == 2) {
    // A block reads one float past its last even element: blocks stop
    // before the last element.
    const DD dd;
    const DH dh;
    const int64_t n = lanes();
    for (; t + n < count; t += n) {
      hn::Vec<DH> even, odd;
      hn::LoadInterleaved2(dh, src + 2 * t, even, odd);
      hn::StoreU(hn::PromoteTo(dd, even), dd, dst + t);
    }
  }
  for (; t < count; ++t) dst[t] = src[t * step];
}

// The tables of a panel's runs: kernel rows and columns up to this bound
// are looked up, larger kernels computed per row of the panel.
struct PatchTables {
  static constexpr int64_t kMaxKernel = 16;
  bool cached;
  PatchRows rows[kMaxPanelWidth][kMaxKernel];
  PatchColumns columns[kMaxPanelWidth][kMaxKernel];
};

void pack_patch_panel(const GemmPatches& p, int64_t k0, int64_t depth, int64_t j0, int64_t cols, int64_t width,
                      double* panel) {
  PatchRun runs[kMaxPanelWidth];
  int64_t run_count = 0;
  for (int64_t j = j0; j < j0 + cols;) {
    const int64_t oh = j / p.out_w, ow = j % p.out_w;
    const int64_t count = std::min(p.out_w - ow, j0 + cols - j);
    runs[run_count++] = PatchRun{oh, ow, count, j - j0};
    j += count;
  }
  PatchTables tables;
  tables.cached = p.kernel_h <= PatchTables::kMaxKernel && p.kernel_w <= PatchTables::kMaxKernel;
  if (tables.cached)
    for (int64_t r = 0; r < run_count; ++r) {
      for (int64_t kh = 0; kh < p.kernel_h; ++kh) tables.rows[r][kh] = patch_rows(p, runs[r], kh);
      for (int64_t kw = 0; kw < p.kernel_w; ++kw) tables.columns[r][kw] = patch_columns(p, runs[r], kw);
    }
  const int64_t step = p.stride_w * p.col_stride;
  const int64_t taps = p.kernel_h * p.kernel_w;
  int64_t channel = k0 / taps, kh = k0 % taps / p.kernel_w, kw = k0 % p.kernel_w;
  for (int64_t k = 0; k < depth; ++k) {
    double* row = panel + k * width;
    const float* plane = p.input + channel * p.channel_stride;
    for (int64_t r = 0; r < run_count; ++r) {
      const PatchRun& run = runs[r];
      const PatchRows rows = tables.cached ? tables.rows[r][kh] : patch_rows(p, run, kh);
      const PatchColumns span = tables.cached ? tables.columns[r][kw] : patch_columns(p, run, kw);
      double* dst = row + run.column;
      const int64_t first = rows.inside ? span.first : run.count;
      const int64_t end = rows.inside ? span.end : run.count;
      std::fill(dst, dst + first, 0.0);
      if (first < end) copy_strided(plane + rows.offset + span.offset, step, end - first, dst + first);
      std::fill(dst + end, dst + run.count, 0.0);
    }
    std::fill(row + cols, row + width, 0.0);
    if (++kw == p.kernel_w) {
      kw = 0;
      if (++kh == p.kernel_h) {
        kh = 0;
        ++channel;
      }
    }
  }
}

void pack_rhs_panel(const GemmRhs& b, int64_t k0, int64_t depth, int64_t j0, int64_t cols, int64_t width,
                    double* panel) {
  if (b.kind == GemmRhs::Kind::Matrix) pack_matrix_panel(b.matrix, k0, depth, j0, cols, width, panel);
  else pack_patch_panel(b.patches, k0, depth, j0, cols, width, panel);
}

// ---- the micro-kernel ----

// What the last depth block adds to a tile's sums before rounding them:
// sum * scale (when scaled), then one bias per row, per column or per
// element (bias values already promoted and multiplied by their scale).
struct Epilogue {
  bool scaled;
  double scale;
  const double* row_bias;   // R values, or null
  const double* col_bias;   // the panel's width of values, or null
  const double* tile_bias;  // R rows of the panel's width, or null
};

// A tile's operands and where its sums come from and go to.
struct Tile {
  const double* a;  // row r's element k at a[r * depth + k]
  const double* panel;
  int64_t depth;
  const double* partial_in;  // earlier depth blocks' sums (rows of the panel's width), or null: from +0.0
  double* partial_out;       // where the sums wait for the next depth block, or null: the last block
  float* out;                // the last block's results: rows of the panel's width, out_stride apart
  int64_t out_stride;
  const Epilogue* epilogue;
};

// sums[R x V vectors] += a[R x depth] * panel[depth x V vectors], in
// float64: one multiply (exact) and one add per term, k in increasing
// order. After the last depth block: the epilogue, then one rounding to
// float32.
template <int R, int V>
void multiply_tile(const Tile& t) {
  const DD d;
  const DH dh;
  const int64_t n = lanes();
  const int64_t width = V * n;
  VD sum[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v)
      sum[r][v] = t.partial_in != nullptr ? hn::LoadU(d, t.partial_in + r * width + v * n) : hn::Zero(d);
  const double* HWY_RESTRICT a = t.a;
  const double* HWY_RESTRICT panel = t.panel;
  for (int64_t k = 0; k < t.depth; ++k) {
    VD b[V];
    for (int v = 0; v < V; ++v) b[v] = hn::Load(d, panel + k * width + v * n);
    for (int r = 0; r < R; ++r) {
      const VD av = hn::Set(d, a[r * t.depth + k]);
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], hn::Mul(av, b[v]));
    }
  }
  if (t.partial_out != nullptr) {
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) hn::StoreU(sum[r][v], d, t.partial_out + r * width + v * n);
    return;
  }
  const Epilogue& e = *t.epilogue;
  if (e.scaled)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Mul(sum[r][v], hn::Set(d, e.scale));
  if (e.row_bias != nullptr)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], hn::Set(d, e.row_bias[r]));
  if (e.col_bias != nullptr)
    for (int v = 0; v < V; ++v) {
      const VD bias = hn::Load(d, e.col_bias + v * n);
      for (int r = 0; r < R; ++r) sum[r][v] = hn::Add(sum[r][v], bias);
    }
  if (e.tile_bias != nullptr)
    for (int r = 0; r < R; ++r)
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], hn::Load(d, e.tile_bias + r * width + v * n));
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) hn::StoreU(DemoteToFloat(dh, sum[r][v]), dh, t.out + r * t.out_stride + v * n);
}

// The panel widths a tile may have: 1, 2, 4 or 8 vectors, as long as the
// sums fit the registers.
template <int R>
void multiply_tile_width(int vectors, const Tile& t) {
  if constexpr (R * 8 <= kSums && kMaxVectors >= 8) {
    if (vectors == 8) return multiply_tile<R, 8>(t);
  }
  if constexpr (R * 4 <= kSums && kMaxVectors >= 4) {
    if (vectors == 4) return multiply_tile<R, 4>(t);
  }
  if constexpr (R * 2 <= kSums && kMaxVectors >= 2) {
    if (vectors == 2) return multiply_tile<R, 2>(t);
  }
  multiply_tile<R, 1>(t);
}

template <int R>
void multiply_tile_rows(int rows, int vectors, const Tile& t) {
  if constexpr (R > 1) {
    if (rows < R) return multiply_tile_rows<R - 1>(rows, vectors, t);
  }
  multiply_tile_width<R>(vectors, t);
}

// The widest panel whose tiles of `rows` rows keep their sums in registers.
int widest_panel(int64_t rows) {
  const int64_t tile_rows = std::min<int64_t>(rows, kTileRows);
  int vectors = 1;
  while (vectors * 2 <= kMaxVectors && tile_rows * vectors * 2 <= kSums) vectors *= 2;
  return vectors;
}

// The narrowest allowed width (1, 2, 4, 8 vectors) that covers `cols`.
int panel_vectors(int64_t cols, int widest) {
  int vectors = 1;
  while (vectors < widest && vectors * lanes() < cols) vectors *= 2;
  return vectors;
}

// ---- blocking ----

// Where column j of out sits relative to its row (gemm.h, GemmOut).
int64_t column_offset(const GemmOut& out, int64_t j) {
  return j / out.segment * out.segment_stride + j % out.segment * out.col_stride;
}

struct Scratch {
  double* panel;      // kDepthBlock x kMaxPanelWidth
  double* lhs_tile;   // kTileRows x kDepthBlock
  double* partial;    // kPartialSums
  float* staging;     // kTileRows x kMaxPanelWidth
  double* col_bias;   // kMaxPanelWidth
  double* tile_bias;  // kTileRows x kMaxPanelWidth
};

// One panel of columns [j0, j0 + cols), `vectors` wide, of the rows
// [i0, i0 + rows).
struct PanelStep {
  const Gemm& g;
  bool lhs_contiguous;
  int64_t i0, rows;
  int vectors;
  int64_t j0, cols;
};

// The bias of out[i, j] times its scale, promoted (gemm.h, GemmBias).
double bias_at(const GemmBias& bias, int64_t i, int64_t j) {
  return static_cast<double>(bias.scale) * bias.data[i * bias.row_stride + j * bias.col_stride];
}

// The epilogue's per-column bias, packed once per panel.
Epilogue panel_epilogue(const PanelStep& s, const Scratch& scratch) {
  const GemmBias& bias = s.g.bias;
  Epilogue e{s.g.sum_scale != 1.0f, s.g.sum_scale, nullptr, nullptr, nullptr};
  if (bias.data != nullptr && bias.row_stride == 0) {
    const int64_t width = s.vectors * lanes();
    for (int64_t c = 0; c < width; ++c) scratch.col_bias[c] = c < s.cols ? bias_at(bias, 0, s.j0 + c) : 0.0;
    e.col_bias = scratch.col_bias;
  }
  return e;
}

// The per-row or per-element bias of rows [i, i + rows), for the epilogue.
void tile_epilogue(const PanelStep& s, int64_t i, int64_t rows, const Scratch& scratch, Epilogue& e) {
  const GemmBias& bias = s.g.bias;
  if (bias.data == nullptr || bias.row_stride == 0) return;
  if (bias.col_stride == 0) {
    for (int64_t r = 0; r < rows; ++r) scratch.tile_bias[r] = bias_at(bias, i + r, 0);
    e.row_bias = scratch.tile_bias;
    return;
  }
  const int64_t width = s.vectors * lanes();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c)
      scratch.tile_bias[r * width + c] = c < s.cols ? bias_at(bias, i + r, s.j0 + c) : 0.0;
  e.tile_bias = scratch.tile_bias;
}

// Every tile of rows of one depth block [k0, k0 + depth) times its packed
// panel; the first block starts from +0.0, the last one writes out.
void multiply_block(const PanelStep& s, int64_t k0, int64_t depth, bool first, bool last, const Scratch& scratch) {
  const Gemm& g = s.g;
  const GemmOut& out = g.out;
  const int64_t width = s.vectors * lanes();
  const bool direct = out.col_stride == 1 && s.cols == width && s.j0 % out.segment + s.cols <= out.segment;
  Epilogue e{};
  if (last) e = panel_epilogue(s, scratch);
  for (int64_t i = s.i0; i < s.i0 + s.rows; i += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, s.i0 + s.rows - i);
    double* partial = scratch.partial + (i - s.i0) * width;
    if (depth > 0) pack_lhs_tile(g.a, s.lhs_contiguous, i, rows, k0, depth, scratch.lhs_tile);
    Tile t{scratch.lhs_tile, scratch.panel, depth, first ? nullptr : partial, last ? nullptr : partial,
           scratch.staging, width, &e};
    float* out_rows = out.data + i * out.row_stride;
    if (last) {
      tile_epilogue(s, i, rows, scratch, e);
      if (direct) {
        t.out = out_rows + column_offset(out, s.j0);
        t.out_stride = out.row_stride;
      }
    }
    multiply_tile_rows<kTileRows>(static_cast<int>(rows), s.vectors, t);
    if (last && !direct)
      for (int64_t c = 0; c < s.cols; ++c) {
        const int64_t offset = column_offset(out, s.j0 + c);
        for (int64_t r = 0; r < rows; ++r) out_rows[r * out.row_stride + offset] = scratch.staging[r * width + c];
      }
  }
}

// One panel of columns through every depth block, in increasing order.
void multiply_panel(const PanelStep& s, const Scratch& scratch) {
  const Gemm& g = s.g;
  // Equal depth blocks (576 = 3 x 192, not 256 + 256 + 64); depth 0 is one
  // empty block, which still writes the output.
  const int64_t blocks = std::max<int64_t>(1, ceil_div(g.depth, kDepthBlock));
  const int64_t block_depth = ceil_div(g.depth, blocks);
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t k0 = block * block_depth;
    const int64_t depth = std::min(block_depth, g.depth - k0);
    if (depth > 0) pack_rhs_panel(g.b, k0, depth, s.j0, s.cols, s.vectors * lanes(), scratch.panel);
    multiply_block(s, k0, depth, block == 0, block == blocks - 1, scratch);
  }
}

// Rows per block: all of them when the reduction is one depth block (no
// partial sums to keep), else equal blocks of whole tiles that the scratch
// holds (each block packs the panels again).
int64_t row_block(const Gemm& g, int widest) {
  if (g.depth <= kDepthBlock) return g.rows;
  const int64_t fit = std::max<int64_t>(1, kPartialSums / (widest * lanes()) / kTileRows);  // tiles
  const int64_t tiles = ceil_div(g.rows, kTileRows);
  return ceil_div(tiles, ceil_div(tiles, fit)) * kTileRows;
}

}  // namespace

void MultiplyMatrices(const Gemm& g) {
  if (g.rows == 0 || g.cols == 0) return;
  HWY_ALIGN double panel[kDepthBlock * kMaxPanelWidth];
  HWY_ALIGN double lhs_tile[kTileRows * kDepthBlock];
  HWY_ALIGN double partial[kPartialSums];
  HWY_ALIGN float staging[kTileRows * kMaxPanelWidth];
  HWY_ALIGN double col_bias[kMaxPanelWidth];
  HWY_ALIGN double tile_bias[kTileRows * kMaxPanelWidth];
  const Scratch scratch{panel, lhs_tile, partial, staging, col_bias, tile_bias};
  const bool lhs_contiguous = lhs_is_contiguous(g.a);
  const int widest = widest_panel(g.rows);
  const int64_t block_rows = row_block(g, widest);
  for (int64_t i0 = 0; i0 < g.rows; i0 += block_rows) {
    const int64_t rows = std::min(block_rows, g.rows - i0);
    for (int64_t j0 = 0; j0 < g.cols;) {
      const int vectors = panel_vectors(g.cols - j0, widest);
      const int64_t cols = std::min(vectors * lanes(), g.cols - j0);
      multiply_panel(PanelStep{g, lhs_contiguous, i0, rows, vectors, j0, cols}, scratch);
      j0 += cols;
    }
  }
}

ET_OPS_HWY_NAMESPACE_END(et_ops::kernels::portable::detail)

#if HWY_ONCE
namespace et_ops::kernels::portable::detail {

HWY_EXPORT(MultiplyMatrices);

void gemm(const Gemm& problem) { HWY_DYNAMIC_DISPATCH(MultiplyMatrices)(problem); }

}  // namespace et_ops::kernels::portable::detail
#endif  // HWY_ONCE
