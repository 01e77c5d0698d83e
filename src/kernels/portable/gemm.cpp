// The blocked float32 matrix product of gemm.h, compiled once per SIMD
// target (Highway's foreach_target) and chosen at run time.
//
// Blocking: the reduction is cut into blocks of at most kDepthBlock steps,
// processed in increasing order; partial sums stay in `out` between
// blocks, which keeps each element's order of additions. Within a depth
// block, each panel of columns of b (V vectors wide) is packed once (zero
// beyond the last column and in a convolution's padding) and stays in the
// L1 cache while every tile of rows of a multiplies it; a tile keeps its
// R x V vectors of sums in registers for the whole block. Rows of a are
// read in place when the reduction index steps through them one float at
// a time (contiguous weights and inputs), else copied per tile.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "gemm.cpp"
#include <hwy/foreach_target.h>  // must precede highway.h
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "checks.h"
#include "gemm.h"

HWY_BEFORE_NAMESPACE();
namespace et_ops::kernels::portable::detail {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
// Internal linkage: the kernel files share this per-target namespace.
namespace {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

// Sums a tile keeps in registers: 12 of AVX2's 16 vector registers, 24 of
// AVX-512's 32 (the rest hold the panel's vectors and a broadcast).
#if HWY_TARGET <= HWY_AVX3
constexpr int kTileRows = 12;
#else
constexpr int kTileRows = 6;
#endif
constexpr int kSums = 2 * kTileRows;
constexpr int64_t kDepthBlock = 256;
constexpr int64_t kMaxLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
// Panels are at most 64 floats wide (and at most 8 vectors).
constexpr int kMaxVectors = static_cast<int>(std::min<int64_t>(8, std::max<int64_t>(1, 64 / kMaxLanes)));
constexpr int64_t kMaxPanelWidth = kMaxVectors * kMaxLanes;

int64_t lanes() { return static_cast<int64_t>(hn::Lanes(DF())); }

// ---- the left operand ----

// Whether row i's reduction steps are one float apart, so that a tile can
// read them in place: element k of the row at row + k.
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

// Rows [i0, i0 + rows) of a over reduction steps [k0, k0 + depth), copied
// row after row (`depth` floats each).
void copy_lhs_tile(const GemmLhs& a, int64_t i0, int64_t rows, int64_t k0, int64_t depth, float* tile) {
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
TransposedPart pack_transposed_blocks(const float*, int64_t, int64_t, int64_t, int64_t, float*) { return {0, 0}; }
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

// panel[k][c] = src[c * col_stride + k] for the first multiple of the
// block size of `cols` columns and of `depth` rows; returns those numbers
// of columns and rows (0 when the target's vectors are too narrow).
struct TransposedPart {
  int64_t cols, depth;
};

TransposedPart pack_transposed_blocks(const float* src, int64_t col_stride, int64_t depth, int64_t cols,
                                      int64_t width, float* panel) {
  const DT d;
  const int64_t n = kTransposeLanes;
  const TransposedPart part{cols / n * n, depth / n * n};
  VT rows[kTransposeLanes];
  for (int64_t c0 = 0; c0 < part.cols; c0 += n)
    for (int64_t k0 = 0; k0 < part.depth; k0 += n) {
      for (int64_t i = 0; i < n; ++i) rows[i] = hn::LoadU(d, src + (c0 + i) * col_stride + k0);
      transpose_block(rows);
      for (int64_t i = 0; i < n; ++i) hn::StoreU(rows[i], d, panel + (k0 + i) * width + c0);
    }
  return part;
}
#endif  // HWY_TARGET == HWY_SCALAR

// ---- the right operand: a panel of `depth` rows of `width` floats,
// columns past `cols` zero ----

void pack_matrix_panel(const GemmMatrix& b, int64_t k0, int64_t depth, int64_t j0, int64_t cols, int64_t width,
                       float* panel) {
  const DF d;
  const int64_t n = lanes();
  const float* origin = b.data + k0 * b.row_stride + j0 * b.col_stride;
  if (b.col_stride == 1) {
    for (int64_t k = 0; k < depth; ++k) {
      const float* src = origin + k * b.row_stride;
      float* dst = panel + k * width;
      int64_t c = 0;
      for (; c + n <= cols; c += n) hn::Store(hn::LoadU(d, src + c), d, dst + c);
      for (; c < cols; ++c) dst[c] = src[c];
      for (; c < width; ++c) dst[c] = 0.0f;
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
  for (int64_t k = 0; k < depth; ++k) std::fill(panel + k * width + cols, panel + (k + 1) * width, 0.0f);
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

// dst[t] = src[t * step] for t < count.
void copy_strided(const float* src, int64_t step, int64_t count, float* dst) {
  const DF d;
  const int64_t n = lanes();
  int64_t t = 0;
  if (step == 1) {
    for (; t + n <= count; t += n) hn::StoreU(hn::LoadU(d, src + t), d, dst + t);
  } else if (step == 2) {
    // A block reads one float past its last even element: blocks stop
    // before the last element.
    for (; t + n < count; t += n) {
      VF even, odd;
      hn::LoadInterleaved2(d, src + 2 * t, even, odd);
      hn::StoreU(even, d, dst + t);
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
                      float* panel) {
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
    float* row = panel + k * width;
    const float* plane = p.input + channel * p.channel_stride;
    for (int64_t r = 0; r < run_count; ++r) {
      const PatchRun& run = runs[r];
      const PatchRows rows = tables.cached ? tables.rows[r][kh] : patch_rows(p, run, kh);
      const PatchColumns span = tables.cached ? tables.columns[r][kw] : patch_columns(p, run, kw);
      float* dst = row + run.column;
      const int64_t first = rows.inside ? span.first : run.count;
      const int64_t end = rows.inside ? span.end : run.count;
      for (int64_t c = 0; c < first; ++c) dst[c] = 0.0f;
      if (first < end) copy_strided(plane + rows.offset + span.offset, step, end - first, dst + first);
      for (int64_t c = end; c < run.count; ++c) dst[c] = 0.0f;
    }
    for (int64_t c = cols; c < width; ++c) row[c] = 0.0f;
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
                    float* panel) {
  if (b.kind == GemmRhs::Kind::Matrix) pack_matrix_panel(b.matrix, k0, depth, j0, cols, width, panel);
  else pack_patch_panel(b.patches, k0, depth, j0, cols, width, panel);
}

// ---- the micro-kernel ----

// A tile's operands and where its sums come from and go to: rows of the
// panel's width, `stride` apart (out itself, or a staging copy).
struct Tile {
  const float* a;  // row r's element k at a[r * a_stride + k]
  int64_t a_stride;
  const float* panel;
  int64_t depth;
  float* sums;
  int64_t sums_stride;
  bool load;              // continue earlier depth blocks' sums (else start from +0.0)
  const float* row_bias;  // R values, or null
  const float* col_bias;  // the panel's width of values, or null
};

// sums[R x V vectors] += a[R x depth] * panel[depth x V vectors]; then the
// bias. One multiply and one add per term, k in increasing order.
template <int R, int V>
void multiply_tile(const Tile& t) {
  const DF d;
  const int64_t n = lanes();
  const int64_t width = V * n;
  VF sum[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) sum[r][v] = t.load ? hn::LoadU(d, t.sums + r * t.sums_stride + v * n) : hn::Zero(d);
  const float* HWY_RESTRICT a = t.a;
  const float* HWY_RESTRICT panel = t.panel;
  for (int64_t k = 0; k < t.depth; ++k) {
    VF b[V];
    for (int v = 0; v < V; ++v) b[v] = hn::Load(d, panel + k * width + v * n);
    for (int r = 0; r < R; ++r) {
      const VF av = hn::Set(d, a[r * t.a_stride + k]);
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], hn::Mul(av, b[v]));
    }
  }
  if (t.row_bias != nullptr)
    for (int r = 0; r < R; ++r) {
      const VF bias = hn::Set(d, t.row_bias[r]);
      for (int v = 0; v < V; ++v) sum[r][v] = hn::Add(sum[r][v], bias);
    }
  if (t.col_bias != nullptr)
    for (int v = 0; v < V; ++v) {
      const VF bias = hn::Load(d, t.col_bias + v * n);
      for (int r = 0; r < R; ++r) sum[r][v] = hn::Add(sum[r][v], bias);
    }
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) hn::StoreU(sum[r][v], d, t.sums + r * t.sums_stride + v * n);
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

// One panel of one depth block, multiplied by every tile of rows.
struct PanelStep {
  const Gemm& g;
  bool lhs_in_place;
  const float* panel;
  int vectors;
  int64_t k0, depth, j0, cols;
  bool first_block, last_block;
  const float* col_bias;  // packed panel width of values, or null
};

struct Scratch {
  float* lhs_tile;  // kTileRows x kDepthBlock
  float* staging;   // kTileRows x kMaxPanelWidth
};

void multiply_panel(const PanelStep& s, const Scratch& scratch) {
  const Gemm& g = s.g;
  const int64_t width = s.vectors * lanes();
  const GemmOut& out = g.out;
  const bool direct = out.col_stride == 1 && s.cols == width && s.j0 % out.segment + s.cols <= out.segment;
  const bool rows_bias = s.last_block && g.bias.kind == GemmBias::Kind::PerRow;
  int64_t offsets[kMaxPanelWidth];  // of out's columns, for staging
  if (!direct)
    for (int64_t c = 0; c < s.cols; ++c) offsets[c] = column_offset(out, s.j0 + c);
  float row_bias[kTileRows];
  for (int64_t i = 0; i < g.rows; i += kTileRows) {
    const int64_t rows = std::min<int64_t>(kTileRows, g.rows - i);
    if (rows_bias)
      for (int64_t r = 0; r < rows; ++r) row_bias[r] = g.bias.data[(i + r) * g.bias.stride];
    Tile t{nullptr, s.depth, s.panel, s.depth, scratch.staging, width, !s.first_block,
           rows_bias ? row_bias : nullptr, s.col_bias};
    if (s.depth > 0 && s.lhs_in_place) {
      t.a = g.a.data + i * g.a.row_stride + s.k0;
      t.a_stride = g.a.row_stride;
    } else if (s.depth > 0) {
      copy_lhs_tile(g.a, i, rows, s.k0, s.depth, scratch.lhs_tile);
      t.a = scratch.lhs_tile;
    }
    float* out_rows = out.data + i * out.row_stride;
    if (direct) {
      t.sums = out_rows + column_offset(out, s.j0);
      t.sums_stride = out.row_stride;
    } else if (!s.first_block) {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c)
          scratch.staging[r * width + c] = out_rows[r * out.row_stride + offsets[c]];
    }
    multiply_tile_rows<kTileRows>(static_cast<int>(rows), s.vectors, t);
    if (!direct)
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c)
          out_rows[r * out.row_stride + offsets[c]] = scratch.staging[r * width + c];
  }
}

}  // namespace

void MultiplyMatrices(const Gemm& g) {
  if (g.rows == 0 || g.cols == 0) return;
  HWY_ALIGN float panel[kDepthBlock * kMaxPanelWidth];
  HWY_ALIGN float lhs_tile[kTileRows * kDepthBlock];
  HWY_ALIGN float staging[kTileRows * kMaxPanelWidth];
  HWY_ALIGN float col_bias[kMaxPanelWidth];
  const Scratch scratch{lhs_tile, staging};
  const bool lhs_in_place = lhs_is_contiguous(g.a);
  const int widest = widest_panel(g.rows);
  // Equal depth blocks (576 = 3 x 192, not 256 + 256 + 64); depth 0 is one
  // empty block, which still writes the output.
  const int64_t blocks = std::max<int64_t>(1, ceil_div(g.depth, kDepthBlock));
  const int64_t block_depth = ceil_div(g.depth, blocks);
  for (int64_t block = 0; block < blocks; ++block) {
    const int64_t k0 = block * block_depth;
    const int64_t depth = std::min(block_depth, g.depth - k0);
    const bool last = block == blocks - 1;
    for (int64_t j0 = 0; j0 < g.cols;) {
      const int vectors = panel_vectors(g.cols - j0, widest);
      const int64_t width = vectors * lanes();
      const int64_t cols = std::min(width, g.cols - j0);
      if (depth > 0) pack_rhs_panel(g.b, k0, depth, j0, cols, width, panel);
      const bool cols_bias = last && g.bias.kind == GemmBias::Kind::PerColumn;
      if (cols_bias)
        for (int64_t c = 0; c < width; ++c) col_bias[c] = c < cols ? g.bias.data[(j0 + c) * g.bias.stride] : 0.0f;
      multiply_panel(PanelStep{g, lhs_in_place, panel, vectors, k0, depth, j0, cols, block == 0, last,
                               cols_bias ? col_bias : nullptr},
                     scratch);
      j0 += cols;
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace et_ops::kernels::portable::detail
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace et_ops::kernels::portable::detail {

HWY_EXPORT(MultiplyMatrices);

void gemm(const Gemm& problem) { HWY_DYNAMIC_DISPATCH(MultiplyMatrices)(problem); }

}  // namespace et_ops::kernels::portable::detail
#endif  // HWY_ONCE
