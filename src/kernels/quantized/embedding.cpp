// embedding_byte / embedding_2bit / embedding_4bit, .out and .dtype_out
// (reference §6): look up rows of a quantized table and dequantize them per
// group, with PyTorch's rounding to the scales' dtype P before converting to
// the output dtype O. Float32 tables are gathered straight from the packed
// rows with the vector dequantize.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using namespace detail;  // the set's checks and conversions

// How weight elements are packed into bytes (reference §6.2).
enum class Packing { Byte, FourBit, TwoBit };

struct Overload {
  const char* op;
  Packing packing;
  bool dtype_out;  // the .dtype_out overload (optional dtype argument)
};

int64_t elements_per_byte(Packing p) { return p == Packing::Byte ? 1 : p == Packing::FourBit ? 2 : 4; }

// Sizes derived from the arguments once they are checked.
struct Layout {
  int64_t rows;        // R, embeddings in the table
  int64_t dim;         // E, decoded elements per embedding
  int64_t group_size;  // gs = E / G (E for 1-D scales)
};

// ---- argument checks (§6.5, ET's order with ours interleaved) ----

bool check_float_dtype(KernelContext& ctx, const char* op, const char* what, TensorRef t) {
  if (detail::is_float32_or_narrower(t.dtype())) return true;
  return fail(ctx, op, "{} must be float32, float16 or bfloat16, got {}", what, dtype_name(t.dtype()));
}

std::optional<Layout> check_table(KernelContext& ctx, const Overload& o, TensorRef weight, TensorRef scales) {
  if (weight.dim() != 2) {
    fail(ctx, o.op, "weight must be 2-D, got shape {}", shape_string(weight));
    return std::nullopt;
  }
  if (scales.dim() != 1 && scales.dim() != 2) {
    fail(ctx, o.op, "weight_scales must be 1-D or 2-D, got shape {}", shape_string(scales));
    return std::nullopt;
  }
  if (scales.size(0) != weight.size(0)) {
    fail(ctx, o.op, "weight_scales has {} rows but weight has {}", scales.size(0), weight.size(0));
    return std::nullopt;
  }
  const int64_t dim = weight.size(1) * elements_per_byte(o.packing);
  const int64_t groups = scales.dim() == 2 ? scales.size(1) : 1;
  if (groups < 1 || dim % groups != 0) {
    fail(ctx, o.op, "weight_scales has {} groups per row, which does not divide the embedding dim {}", groups, dim);
    return std::nullopt;
  }
  return Layout{weight.size(0), dim, dim / groups};
}

bool check_weight_dtype(KernelContext& ctx, const Overload& o, TensorRef weight) {
  const DType t = weight.dtype();
  if (o.packing == Packing::Byte) {
    if (t == DType::UInt8 || t == DType::Int8) return true;
    return fail(ctx, o.op, "weight must be uint8 or int8, got {}", dtype_name(t));
  }
  return check_dtype(ctx, o.op, "weight", weight, DType::UInt8);
}

bool check_zero_points(KernelContext& ctx, const Overload& o, TensorRef scales, TensorRef zero_points) {
  if (zero_points.dim() != scales.dim())
    return fail(ctx, o.op, "weight_zero_points must have the rank of weight_scales ({}), got shape {}",
                scales.dim(), shape_string(zero_points));
  if (zero_points.dtype() != scales.dtype())
    return fail(ctx, o.op, "weight_zero_points must have the dtype of weight_scales ({}), got {}",
                dtype_name(scales.dtype()), dtype_name(zero_points.dtype()));
  if (!zero_points.same_shape(scales))
    return fail(ctx, o.op, "weight_zero_points has shape {}, expected {} (the shape of weight_scales)",
                shape_string(zero_points), shape_string(scales));
  return true;
}

bool check_indices_dtype(KernelContext& ctx, const Overload& o, TensorRef indices) {
  const DType t = indices.dtype();
  if (t == DType::Int64) return true;
  if (t == DType::Int32 && o.packing != Packing::Byte) return true;
  return fail(ctx, o.op, "indices must be {}, got {}", o.packing == Packing::Byte ? "int64" : "int32 or int64",
              dtype_name(t));
}

bool check_out_dtype(KernelContext& ctx, const Overload& o, TensorRef scales, std::optional<DType> dtype,
                     TensorRef out) {
  if (dtype && *dtype != out.dtype())
    return fail(ctx, o.op, "out dtype {} does not match the requested dtype {}", dtype_name(out.dtype()),
                dtype_name(*dtype));
  if (!o.dtype_out && out.dtype() != scales.dtype())
    return fail(ctx, o.op, "out dtype {} must equal the weight_scales dtype {} (use .dtype_out to convert)",
                dtype_name(out.dtype()), dtype_name(scales.dtype()));
  return true;
}

// Our rule: out must already be exactly indices.shape + [E].
bool check_out_shape(KernelContext& ctx, const Overload& o, TensorRef indices, const Layout& layout,
                     TensorRef out) {
  bool matches = out.dim() == indices.dim() + 1 && out.size(indices.dim()) == layout.dim;
  for (int64_t d = 0; matches && d < indices.dim(); ++d) matches = out.size(d) == indices.size(d);
  if (matches) return true;
  std::string expected = "[";
  for (int64_t d = 0; d < indices.dim(); ++d) expected += fmt::format("{}, ", indices.size(d));
  return fail(ctx, o.op, "out has shape {}, expected {}{}] (indices shape + embedding dim); outputs are never resized",
              shape_string(out), expected, layout.dim);
}

// The structural promises (checks.h) of every tensor argument, before any
// of their sizes, strides or elements are used.
bool check_structures(KernelContext& ctx, const Overload& o, TensorRef weight, TensorRef scales,
                      std::optional<TensorRef> zero_points, TensorRef indices, TensorRef out) {
  return check_tensor(ctx, o.op, "weight", weight) && check_tensor(ctx, o.op, "weight_scales", scales) &&
         (!zero_points || check_tensor(ctx, o.op, "weight_zero_points", *zero_points)) &&
         check_tensor(ctx, o.op, "indices", indices) && check_tensor(ctx, o.op, "out", out);
}

std::optional<Layout> check_arguments(KernelContext& ctx, const Overload& o, TensorRef weight, TensorRef scales,
                                      std::optional<TensorRef> zero_points, int64_t quant_min, int64_t quant_max,
                                      TensorRef indices, std::optional<DType> dtype, TensorRef out) {
  if (!check_structures(ctx, o, weight, scales, zero_points, indices, out)) return std::nullopt;
  const std::optional<Layout> layout = check_table(ctx, o, weight, scales);
  if (!layout || !check_weight_dtype(ctx, o, weight)) return std::nullopt;
  if (!check_float_dtype(ctx, o.op, "out", out) || !check_float_dtype(ctx, o.op, "weight_scales", scales))
    return std::nullopt;
  if (zero_points && !check_zero_points(ctx, o, scales, *zero_points)) return std::nullopt;
  if (!check_indices_dtype(ctx, o, indices)) return std::nullopt;
  if (quant_min > quant_max) {
    fail(ctx, o.op, "weight_quant_min {} > weight_quant_max {}", quant_min, quant_max);
    return std::nullopt;
  }
  if (!check_out_dtype(ctx, o, scales, dtype, out) || !check_out_shape(ctx, o, indices, *layout, out))
    return std::nullopt;
  return layout;
}

// ---- per-row parameters ----

// One value per (row, group) of a 1-D [R] or 2-D [R, G] tensor.
template <typename P>
struct GroupTable {
  const P* data;
  int64_t row_stride;
  int64_t group_stride;

  explicit GroupTable(TensorRef t)
      : data(t.data_as<const P>()), row_stride(t.stride(0)), group_stride(t.dim() == 2 ? t.stride(1) : 0) {}
  float at(int64_t row, int64_t group) const { return to_f32(data[row * row_stride + group * group_stride]); }
};

// Every index in [0, R), and the scales of every row looked up finite and > 0.
template <typename P>
bool check_rows(KernelContext& ctx, const Overload& o, TensorRef indices, TensorRef scales, const Layout& layout) {
  const GroupTable<P> table(scales);
  const detail::FlatIntegers index(indices);
  const int64_t groups = scales.dim() == 2 ? scales.size(1) : 1;
  for (int64_t p = 0; p < indices.numel(); ++p) {
    const int64_t row = index[p];
    if (row < 0 || row >= layout.rows)
      return fail(ctx, o.op, "indices[{}] = {} is out of range for a weight of {} rows", p, row, layout.rows);
    for (int64_t g = 0; g < groups; ++g) {
      const float s = table.at(row, g);
      if (!(std::isfinite(s) && s > 0.0f))
        return fail(ctx, o.op, "weight_scales[{}][{}] = {} (looked up by indices[{}]) must be finite and > 0", row,
                    g, s, p);
    }
  }
  return true;
}

// ---- weight decoding (§6.2); kUnit: the row's bytes are adjacent ----

template <typename Storage, bool kUnit>
struct ByteRow {
  const Storage* data;
  int64_t stride;
  int32_t operator[](int64_t j) const { return data[j * (kUnit ? 1 : stride)]; }
};

// 4bit: element 2m is the high nibble of byte m, 2m+1 the low one; +8 offset.
template <bool kUnit>
struct NibbleRow {
  const uint8_t* data;
  int64_t stride;
  int32_t operator[](int64_t j) const {
    const uint8_t b = data[(j >> 1) * (kUnit ? 1 : stride)];
    return static_cast<int32_t>((j & 1) ? (b & 0xF) : (b >> 4)) - 8;
  }
};

// 2bit: element 4m+i is bits 2i+1..2i of byte m (least significant first); +2 offset.
template <bool kUnit>
struct CrumbRow {
  const uint8_t* data;
  int64_t stride;
  int32_t operator[](int64_t j) const {
    const uint8_t b = data[(j >> 2) * (kUnit ? 1 : stride)];
    return static_cast<int32_t>((b >> (2 * (j & 3))) & 3) - 2;
  }
};

// Rounds a binary32 value to P and widens it back (identity for f32).
template <typename P>
float round_to(float v) {
  return to_f32(from_f32<P>(v));
}

// One looked-up row: out[j] = O(P(fl32(P(fl32(w - zp)) * s))), or without
// zero points O(P(fl32(w * s))) (§6.4).
template <typename P, typename O, bool kUnit, typename Row>
void dequantize_row(Row weight, const GroupTable<P>& scales, const std::optional<GroupTable<P>>& zero_points,
                    int64_t row, const Layout& layout, O* dst, int64_t dst_stride) {
  const int64_t step = kUnit ? 1 : dst_stride;
  for (int64_t start = 0, group = 0; start < layout.dim; start += layout.group_size, ++group) {
    const float s = scales.at(row, group);
    const int64_t end = start + layout.group_size;
    if (zero_points) {
      const float zp = zero_points->at(row, group);
      for (int64_t j = start; j < end; ++j) {
        const float shifted = round_to<P>(static_cast<float>(weight[j]) - zp);
        dst[j * step] = from_f32<O>(round_to<P>(shifted * s));
      }
    } else {
      for (int64_t j = start; j < end; ++j) dst[j * step] = from_f32<O>(round_to<P>(static_cast<float>(weight[j]) * s));
    }
  }
}

// The common case, P = O = f32 with adjacent elements: a row's integers
// (unpacked first for 4bit) go through the vector dequantize of §4.3,
// fl32(fl32(fl32(w) - zp) * s), which is §6.4's fl32(fl32(w - zp) * s) since
// w is exact in binary32; without zero points zp = 0 and w - 0 is exact.
// Returns false for the packings and dtypes it does not take.
bool lookup_rows_f32(const Overload& o, TensorRef weight, TensorRef scales, std::optional<TensorRef> zero_points,
                     TensorRef indices, const Layout& layout, TensorRef out) {
  if (o.packing == Packing::TwoBit) return false;
  const GroupTable<float> scale_table(scales);
  std::optional<GroupTable<float>> zp_table;
  if (zero_points) zp_table.emplace(*zero_points);
  const DType stored = o.packing == Packing::FourBit ? DType::Int8 : weight.dtype();
  std::vector<int8_t> unpacked(o.packing == Packing::FourBit ? static_cast<std::size_t>(layout.dim) : 0);
  const detail::FlatIntegers index(indices);
  for (int64_t p = 0; p < indices.numel(); ++p) {
    const int64_t row = index[p];
    const auto* src = static_cast<const uint8_t*>(weight.data()) + row * weight.stride(0);
    if (o.packing == Packing::FourBit) {
      simd::unpack_nibbles(src, static_cast<std::size_t>(weight.size(1)), unpacked.data());
      src = reinterpret_cast<const uint8_t*>(unpacked.data());
    }
    float* dst = out.data_as<float>() + detail::row_offset(out, p);
    for (int64_t start = 0, group = 0; start < layout.dim; start += layout.group_size, ++group) {
      const float zp = zp_table ? zp_table->at(row, group) : 0.0f;
      simd::dequantize_to_f32(stored, src + start, static_cast<std::size_t>(layout.group_size), zp,
                              scale_table.at(row, group), dst + start);
    }
  }
  return true;
}

template <typename P, typename O, bool kUnit>
void lookup_rows(const Overload& o, TensorRef weight, TensorRef scales, std::optional<TensorRef> zero_points,
                 TensorRef indices, const Layout& layout, TensorRef out) {
  const GroupTable<P> scale_table(scales);
  std::optional<GroupTable<P>> zp_table;
  if (zero_points) zp_table.emplace(*zero_points);
  const int64_t weight_stride = weight.stride(1);
  const int64_t dst_stride = out.stride(out.dim() - 1);
  const detail::FlatIntegers index(indices);
  for (int64_t p = 0; p < indices.numel(); ++p) {
    const int64_t row = index[p];
    const int64_t src = row * weight.stride(0);
    O* dst = out.data_as<O>() + detail::row_offset(out, p);
    auto emit = [&](auto decoded) {
      dequantize_row<P, O, kUnit>(decoded, scale_table, zp_table, row, layout, dst, dst_stride);
    };
    switch (o.packing) {
      case Packing::Byte:
        if (weight.dtype() == DType::Int8)
          emit(ByteRow<int8_t, kUnit>{weight.data_as<const int8_t>() + src, weight_stride});
        else
          emit(ByteRow<uint8_t, kUnit>{weight.data_as<const uint8_t>() + src, weight_stride});
        break;
      case Packing::FourBit: emit(NibbleRow<kUnit>{weight.data_as<const uint8_t>() + src, weight_stride}); break;
      case Packing::TwoBit: emit(CrumbRow<kUnit>{weight.data_as<const uint8_t>() + src, weight_stride}); break;
    }
  }
}

bool embedding(KernelContext& ctx, const Overload& o, TensorRef weight, TensorRef scales,
               std::optional<TensorRef> zero_points, int64_t quant_min, int64_t quant_max, TensorRef indices,
               std::optional<DType> dtype, TensorRef out) {
  const std::optional<Layout> layout =
      check_arguments(ctx, o, weight, scales, zero_points, quant_min, quant_max, indices, dtype, out);
  if (!layout) return false;
  bool rows_ok = false;
  detail::dispatch_float32_or_narrower(scales.dtype(), [&](auto p_tag) {
    using P = typename decltype(p_tag)::type;
    rows_ok = check_rows<P>(ctx, o, indices, scales, *layout);
    if (!rows_ok || out.numel() == 0) return;
    const bool unit = weight.stride(1) == 1 && out.stride(out.dim() - 1) == 1;
    const bool f32 = std::is_same_v<P, float> && out.dtype() == DType::Float32;
    if (unit && f32 && lookup_rows_f32(o, weight, scales, zero_points, indices, *layout, out)) return;
    detail::dispatch_float32_or_narrower(out.dtype(), [&](auto o_tag) {
      using O = typename decltype(o_tag)::type;
      if (unit) lookup_rows<P, O, true>(o, weight, scales, zero_points, indices, *layout, out);
      else lookup_rows<P, O, false>(o, weight, scales, zero_points, indices, *layout, out);
    });
  });
  return rows_ok;
}

}  // namespace

// Each packing has two entry points: out in the scales' dtype, and out in an
// explicit dtype.
#define ET_OPS_EMBEDDING_ENTRY_POINTS(NAME, PACKING)                                                            \
  bool NAME##_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,                                 \
                  std::optional<TensorRef> weight_zero_points, int64_t weight_quant_min, int64_t weight_quant_max, \
                  TensorRef indices, TensorRef out) {                                                            \
    return embedding(ctx, Overload{op_name::NAME##_out, PACKING, false}, weight, weight_scales,                   \
                     weight_zero_points, weight_quant_min, weight_quant_max, indices, std::nullopt, out);        \
  }                                                                                                              \
  bool NAME##_dtype_out(KernelContext& ctx, TensorRef weight, TensorRef weight_scales,                           \
                        std::optional<TensorRef> weight_zero_points, int64_t weight_quant_min,                   \
                        int64_t weight_quant_max, TensorRef indices, std::optional<DType> dtype, TensorRef out) { \
    return embedding(ctx, Overload{op_name::NAME##_dtype_out, PACKING, true}, weight, weight_scales,             \
                     weight_zero_points, weight_quant_min, weight_quant_max, indices, dtype, out);               \
  }

ET_OPS_EMBEDDING_ENTRY_POINTS(embedding_byte, Packing::Byte)
ET_OPS_EMBEDDING_ENTRY_POINTS(embedding_2bit, Packing::TwoBit)
ET_OPS_EMBEDDING_ENTRY_POINTS(embedding_4bit, Packing::FourBit)
#undef ET_OPS_EMBEDDING_ENTRY_POINTS

}  // namespace et_ops::kernels::quantized
