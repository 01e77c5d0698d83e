// dequantize_per_channel_group and dequantize_per_channel_group_4bit (.out):
// the group-wise weight dequantization of PyTorch's decomposed reference
// (w.reshape(-1, group_size).sub(zp).mul(scales).to(output_dtype)), one
// scale and zero point per run of group_size elements of a row, with the
// rounding to the scales' dtype of the embedding operators (reference §6.4).
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "checks.h"
#include "et_ops/kernels/quantized.h"
#include "vector_kernels.h"

namespace et_ops::kernels::quantized {
namespace {

using namespace detail;  // the set's checks and conversions

struct Overload {
  const char* op;
  bool four_bit;  // two int4 values per byte instead of one integer per byte
};

constexpr Overload kByte{op_name::dequantize_per_channel_group_out, false};
constexpr Overload k4Bit{op_name::dequantize_per_channel_group_4bit_out, true};

// Sizes derived from the checked arguments.
struct Layout {
  int64_t rows;        // N
  int64_t cols;        // K, decoded elements per row
  int64_t group_size;  // elements per group (K when a larger group has one scale per row)
  int64_t groups;      // K / group_size per row
};

bool is_zero_point_integer(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64;
}

bool check_structures(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef scales,
                      std::optional<TensorRef> zero_points, TensorRef out) {
  return check_tensor(ctx, o.op, "input", input) && check_tensor(ctx, o.op, "scales", scales) &&
         (!zero_points || check_tensor(ctx, o.op, "zero_points", *zero_points)) &&
         check_tensor(ctx, o.op, "out", out);
}

bool check_input_dtype(KernelContext& ctx, const Overload& o, TensorRef input, std::optional<DType> dtype) {
  if (o.four_bit) return check_dtype(ctx, o.op, "input", input, DType::UInt8);
  if (input.dtype() != DType::Int8 && input.dtype() != DType::UInt8)
    return fail(ctx, o.op, "input must be int8 or uint8, got {}", dtype_name(input.dtype()));
  if (*dtype != input.dtype())
    return fail(ctx, o.op, "input dtype {} does not match dtype {}", dtype_name(input.dtype()), dtype_name(*dtype));
  return true;
}

// The quant range is metadata, checked against the bounds of the stored
// integers (int4 for the 4-bit overload).
bool check_range(KernelContext& ctx, const Overload& o, TensorRef input, int64_t quant_min, int64_t quant_max) {
  if (!o.four_bit) return detail::check_quant_range(ctx, o.op, input.dtype(), quant_min, quant_max);
  if (quant_min < -8) return fail(ctx, o.op, "quant_min {} is below the lower bound -8 of int4", quant_min);
  if (quant_max > 7) return fail(ctx, o.op, "quant_max {} is above the upper bound 7 of int4", quant_max);
  if (quant_min > quant_max)
    return fail(ctx, o.op, "invalid quantization range: quant_min {} > quant_max {}", quant_min, quant_max);
  return true;
}

// Upstream's rule for a single-column scale with a group larger than the
// row (GPTQ): the group is the row.
std::optional<Layout> check_groups(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef scales,
                                   int64_t group_size) {
  if (input.dim() != 2) {
    fail(ctx, o.op, "input must be 2-D [N, K{}], got shape {}", o.four_bit ? "/2" : "", shape_string(input));
    return std::nullopt;
  }
  const int64_t rows = input.size(0);
  const int64_t cols = input.size(1) * (o.four_bit ? 2 : 1);
  if (group_size < 1) {
    fail(ctx, o.op, "group_size must be >= 1, got {}", group_size);
    return std::nullopt;
  }
  const bool one_column = scales.dim() >= 1 && scales.size(scales.dim() - 1) == 1;
  if (group_size > cols && one_column && cols > 0) group_size = cols;
  if (cols % group_size != 0) {
    fail(ctx, o.op, "group_size {} does not divide the row length K = {}", group_size, cols);
    return std::nullopt;
  }
  const Layout layout{rows, cols, group_size, cols / group_size};
  if (scales.numel() != rows * layout.groups) {
    fail(ctx, o.op, "scales has {} elements (shape {}), expected N * K / group_size = {} * {}", scales.numel(),
         shape_string(scales), rows, layout.groups);
    return std::nullopt;
  }
  return layout;
}

bool check_zero_points(KernelContext& ctx, const Overload& o, TensorRef zero_points, const Layout& layout) {
  if (!is_zero_point_integer(zero_points.dtype()))
    return fail(ctx, o.op, "zero_points must be int8, int16, int32 or int64, got {}", dtype_name(zero_points.dtype()));
  if (zero_points.numel() != layout.rows * layout.groups)
    return fail(ctx, o.op, "zero_points has {} elements (shape {}), expected N * K / group_size = {} * {}",
                zero_points.numel(), shape_string(zero_points), layout.rows, layout.groups);
  return true;
}

bool check_out(KernelContext& ctx, const Overload& o, DType output_dtype, const Layout& layout, TensorRef out) {
  if (!detail::is_float32_or_narrower(out.dtype()))
    return fail(ctx, o.op, "out must be float32, float16 or bfloat16, got {}", dtype_name(out.dtype()));
  if (out.dtype() != output_dtype)
    return fail(ctx, o.op, "out dtype {} does not match output_dtype {}", dtype_name(out.dtype()),
                dtype_name(output_dtype));
  if (out.dim() != 2 || out.size(0) != layout.rows || out.size(1) != layout.cols)
    return fail(ctx, o.op, "out has shape {}, expected [{}, {}]; outputs are never resized", shape_string(out),
                layout.rows, layout.cols);
  return true;
}

template <typename P>
bool check_scale_values(KernelContext& ctx, const Overload& o, TensorRef scales) {
  const detail::FlatElements<P> values(scales);
  for (int64_t i = 0; i < scales.numel(); ++i) {
    const float s = to_f32(values[i]);
    if (!(std::isfinite(s) && s > 0.0f))
      return fail(ctx, o.op, "scales[{}] must be finite and > 0, got {}", i, s);
  }
  return true;
}

std::optional<Layout> check_arguments(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef scales,
                                      std::optional<TensorRef> zero_points, int64_t quant_min, int64_t quant_max,
                                      std::optional<DType> dtype, int64_t group_size, DType output_dtype,
                                      TensorRef out) {
  if (!check_structures(ctx, o, input, scales, zero_points, out)) return std::nullopt;
  if (!check_input_dtype(ctx, o, input, dtype) || !check_range(ctx, o, input, quant_min, quant_max))
    return std::nullopt;
  const std::optional<Layout> layout = check_groups(ctx, o, input, scales, group_size);
  if (!layout) return std::nullopt;
  if (!detail::is_float32_or_narrower(scales.dtype())) {
    fail(ctx, o.op, "scales must be float32, float16 or bfloat16, got {}", dtype_name(scales.dtype()));
    return std::nullopt;
  }
  if (zero_points && !check_zero_points(ctx, o, *zero_points, *layout)) return std::nullopt;
  if (!check_out(ctx, o, output_dtype, *layout, out)) return std::nullopt;
  return layout;
}

// ---- numerics ----

// The integers of one row, decoded into `scratch` unless they can be read
// where they are (one byte each, adjacent).
const void* decode_row(const Overload& o, TensorRef input, int64_t row, std::vector<int8_t>& scratch) {
  const auto* base = static_cast<const uint8_t*>(input.data()) + row * input.stride(0);
  const int64_t stride = input.stride(1);
  if (!o.four_bit) {
    if (stride == 1) return base;
    for (int64_t j = 0; j < input.size(1); ++j) scratch[static_cast<std::size_t>(j)] = static_cast<int8_t>(base[j * stride]);
    return scratch.data();
  }
  if (stride == 1) {
    simd::unpack_nibbles(base, static_cast<std::size_t>(input.size(1)), scratch.data());
  } else {
    for (int64_t m = 0; m < input.size(1); ++m) {
      const uint8_t b = base[m * stride];
      scratch[static_cast<std::size_t>(2 * m)] = static_cast<int8_t>((b >> 4) - 8);
      scratch[static_cast<std::size_t>(2 * m + 1)] = static_cast<int8_t>((b & 0x0F) - 8);
    }
  }
  return scratch.data();
}

// Value j of a decoded row: u8 for a uint8 input, int8 otherwise.
int32_t decoded_at(const void* row, bool is_unsigned, int64_t j) {
  return is_unsigned ? static_cast<const uint8_t*>(row)[j] : static_cast<const int8_t*>(row)[j];
}

// One group: out = O(P(fl32(fl32(q - zp) * s))). For P = O = f32 with a
// zero point of magnitude <= 2^24 the vector loop computes the same value as
// fl32(fl32(fl32(q) - fl32(zp)) * s), both integers being exact in binary32.
template <typename P, typename O>
void dequantize_group(const void* row, bool is_unsigned, int64_t start, const Layout& layout, int64_t zero_point,
                      float scale, O* dst, int64_t dst_stride) {
  constexpr bool kF32 = std::is_same_v<P, float> && std::is_same_v<O, float>;
  if (kF32 && dst_stride == 1 && std::abs(zero_point) <= (int64_t{1} << 24)) {
    const DType dtype = is_unsigned ? DType::UInt8 : DType::Int8;
    const auto* src = static_cast<const int8_t*>(row) + start;
    simd::dequantize_to_f32(dtype, src, static_cast<std::size_t>(layout.group_size), static_cast<float>(zero_point),
                            scale, reinterpret_cast<float*>(dst) + start);
    return;
  }
  for (int64_t j = start; j < start + layout.group_size; ++j) {
    const auto d = static_cast<float>(static_cast<int64_t>(decoded_at(row, is_unsigned, j)) - zero_point);
    dst[j * dst_stride] = from_f32<O>(to_f32(from_f32<P>(d * scale)));
  }
}

template <typename P, typename O>
void dequantize_rows(const Overload& o, TensorRef input, TensorRef scales, std::optional<TensorRef> zero_points,
                     const Layout& layout, TensorRef out) {
  const detail::FlatElements<P> scale_at(scales);
  std::optional<detail::FlatIntegers> zp64;
  std::optional<detail::FlatElements<int8_t>> zp8;
  std::optional<detail::FlatElements<int16_t>> zp16;
  if (zero_points) {
    if (zero_points->dtype() == DType::Int8) zp8.emplace(*zero_points);
    else if (zero_points->dtype() == DType::Int16) zp16.emplace(*zero_points);
    else zp64.emplace(*zero_points);
  }
  auto zero_point_at = [&](int64_t i) -> int64_t {
    if (zp8) return (*zp8)[i];
    if (zp16) return (*zp16)[i];
    return zp64 ? (*zp64)[i] : 0;
  };
  const bool is_unsigned = !o.four_bit && input.dtype() == DType::UInt8;
  std::vector<int8_t> scratch(static_cast<std::size_t>(layout.cols));
  for (int64_t n = 0; n < layout.rows; ++n) {
    const void* row = decode_row(o, input, n, scratch);
    O* dst = out.data_as<O>() + n * out.stride(0);
    for (int64_t g = 0; g < layout.groups; ++g) {
      const int64_t i = n * layout.groups + g;
      dequantize_group<P, O>(row, is_unsigned, g * layout.group_size, layout, zero_point_at(i),
                             to_f32(scale_at[i]), dst, out.stride(1));
    }
  }
}

bool dequantize_per_channel_group(KernelContext& ctx, const Overload& o, TensorRef input, TensorRef scales,
                                  std::optional<TensorRef> zero_points, int64_t quant_min, int64_t quant_max,
                                  std::optional<DType> dtype, int64_t group_size, DType output_dtype, TensorRef out) {
  const std::optional<Layout> layout = check_arguments(ctx, o, input, scales, zero_points, quant_min, quant_max,
                                                       dtype, group_size, output_dtype, out);
  if (!layout) return false;
  bool ok = false;
  detail::dispatch_float32_or_narrower(scales.dtype(), [&](auto p_tag) {
    using P = typename decltype(p_tag)::type;
    ok = check_scale_values<P>(ctx, o, scales);
    if (!ok || out.numel() == 0) return;
    detail::dispatch_float32_or_narrower(out.dtype(), [&](auto o_tag) {
      dequantize_rows<P, typename decltype(o_tag)::type>(o, input, scales, zero_points, *layout, out);
    });
  });
  return ok;
}

}  // namespace

bool dequantize_per_channel_group_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                      std::optional<TensorRef> zero_points, int64_t quant_min, int64_t quant_max,
                                      DType dtype, int64_t group_size, DType output_dtype, TensorRef out) {
  return dequantize_per_channel_group(ctx, kByte, input, scales, zero_points, quant_min, quant_max, dtype, group_size,
                                      output_dtype, out);
}

bool dequantize_per_channel_group_4bit_out(KernelContext& ctx, TensorRef input, TensorRef scales,
                                           std::optional<TensorRef> zero_points, int64_t quant_min,
                                           int64_t quant_max, int64_t group_size, DType output_dtype,
                                           TensorRef out) {
  return dequantize_per_channel_group(ctx, k4Bit, input, scales, zero_points, quant_min, quant_max, std::nullopt,
                                      group_size, output_dtype, out);
}

}  // namespace et_ops::kernels::quantized
