// The library face of libet_kernels_quantized.so: C-ABI kernels that unpack
// their arguments and call the typed entry points, the manifest, explicit
// registration and the loadable-library entry point.
#include <iterator>

#include "common/args.h"
#include "common/library.h"
#include "et_ops/kernels/quantized.h"
#include "et_ops/version.h"
#include "quantized_fingerprint.h"

namespace et_ops::kernels::quantized {
namespace {

using detail::ArgReader;

void quantize_per_tensor_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::quantize_per_tensor.out", v, n, 7);
  auto input = a.tensor(0, "input");
  auto scale = a.floating(1, "scale");
  auto zp = a.integer(2, "zero_point");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto out = a.tensor(6, "out");
  if (a.ok()) quantize_per_tensor_out(a.context(), input, scale, zp, qmin, qmax, dtype, out);
}

void quantize_per_tensor_tensor_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::quantize_per_tensor.Tensor_out", v, n, 7);
  auto input = a.tensor(0, "input");
  auto scale = a.tensor(1, "scale");
  auto zp = a.tensor(2, "zero_point");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto out = a.tensor(6, "out");
  if (a.ok()) quantize_per_tensor_tensor_out(a.context(), input, scale, zp, qmin, qmax, dtype, out);
}

void quantize_per_channel_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::quantize_per_channel.out", v, n, 8);
  auto input = a.tensor(0, "input");
  auto scales = a.tensor(1, "scales");
  auto zps = a.tensor(2, "zero_points");
  auto axis = a.integer(3, "axis");
  auto qmin = a.integer(4, "quant_min");
  auto qmax = a.integer(5, "quant_max");
  auto dtype = a.scalar_type(6, "dtype");
  auto out = a.tensor(7, "out");
  if (a.ok()) quantize_per_channel_out(a.context(), input, scales, zps, axis, qmin, qmax, dtype, out);
}

void quantize_per_token_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::quantize_per_token.out", v, n, 7);
  auto input = a.tensor(0, "input");
  auto scales = a.tensor(1, "scales");
  auto zps = a.tensor(2, "zero_points");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto out = a.tensor(6, "out");
  if (a.ok()) quantize_per_token_out(a.context(), input, scales, zps, qmin, qmax, dtype, out);
}

void dequantize_per_tensor_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::dequantize_per_tensor.out", v, n, 8);
  auto input = a.tensor(0, "input");
  auto scale = a.floating(1, "scale");
  auto zp = a.integer(2, "zero_point");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto out_dtype = a.optional_scalar_type(6, "out_dtype");
  auto out = a.tensor(7, "out");
  if (a.ok()) dequantize_per_tensor_out(a.context(), input, scale, zp, qmin, qmax, dtype, out_dtype, out);
}

void dequantize_per_tensor_tensor_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::dequantize_per_tensor.Tensor_out", v, n, 8);
  auto input = a.tensor(0, "input");
  auto scale = a.tensor(1, "scale");
  auto zp = a.tensor(2, "zero_point");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto out_dtype = a.optional_scalar_type(6, "out_dtype");
  auto out = a.tensor(7, "out");
  if (a.ok()) dequantize_per_tensor_tensor_out(a.context(), input, scale, zp, qmin, qmax, dtype, out_dtype, out);
}

void dequantize_per_channel_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::dequantize_per_channel.out", v, n, 9);
  auto input = a.tensor(0, "input");
  auto scales = a.tensor(1, "scales");
  auto zps = a.optional_tensor(2, "zero_points");
  auto axis = a.integer(3, "axis");
  auto qmin = a.integer(4, "quant_min");
  auto qmax = a.integer(5, "quant_max");
  auto dtype = a.scalar_type(6, "dtype");
  auto out_dtype = a.optional_scalar_type(7, "out_dtype");
  auto out = a.tensor(8, "out");
  if (a.ok())
    dequantize_per_channel_out(a.context(), input, scales, zps, axis, qmin, qmax, dtype, out_dtype, out);
}

void dequantize_per_token_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::dequantize_per_token.out", v, n, 8);
  auto input = a.tensor(0, "input");
  auto scales = a.tensor(1, "scales");
  auto zps = a.tensor(2, "zero_points");
  auto qmin = a.integer(3, "quant_min");
  auto qmax = a.integer(4, "quant_max");
  auto dtype = a.scalar_type(5, "dtype");
  auto output_dtype = a.scalar_type(6, "output_dtype");
  auto out = a.tensor(7, "out");
  if (a.ok()) dequantize_per_token_out(a.context(), input, scales, zps, qmin, qmax, dtype, output_dtype, out);
}

void choose_qparams_tensor_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::choose_qparams.Tensor_out", v, n, 7);
  auto input = a.tensor(0, "input");
  auto qmin = a.integer(1, "quant_min");
  auto qmax = a.integer(2, "quant_max");
  auto eps = a.floating(3, "eps");
  auto dtype = a.scalar_type(4, "dtype");
  auto scale_out = a.tensor(5, "scale_out");
  auto zp_out = a.tensor(6, "zero_point_out");
  if (a.ok()) choose_qparams_tensor_out(a.context(), input, qmin, qmax, eps, dtype, scale_out, zp_out);
}

void choose_qparams_per_token_asymmetric_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::choose_qparams_per_token_asymmetric.out", v, n, 4);
  auto input = a.tensor(0, "input");
  auto dtype = a.scalar_type(1, "dtype");
  auto scale_out = a.tensor(2, "scale_out");
  auto zp_out = a.tensor(3, "zero_point_out");
  if (a.ok()) choose_qparams_per_token_asymmetric_out(a.context(), input, dtype, scale_out, zp_out);
}

// The six embedding overloads share their argument list; `.dtype_out` adds
// the optional dtype before out.
using EmbeddingOut = bool (*)(KernelContext&, TensorRef, TensorRef, std::optional<TensorRef>, int64_t, int64_t,
                              TensorRef, TensorRef);
using EmbeddingDtypeOut = bool (*)(KernelContext&, TensorRef, TensorRef, std::optional<TensorRef>, int64_t, int64_t,
                                   TensorRef, std::optional<DType>, TensorRef);

template <EmbeddingOut Kernel>
void embedding_out_abi(ArgReader&& a) {
  auto weight = a.tensor(0, "weight");
  auto scales = a.tensor(1, "weight_scales");
  auto zps = a.optional_tensor(2, "weight_zero_points");
  auto qmin = a.integer(3, "weight_quant_min");
  auto qmax = a.integer(4, "weight_quant_max");
  auto indices = a.tensor(5, "indices");
  auto out = a.tensor(6, "out");
  if (a.ok()) Kernel(a.context(), weight, scales, zps, qmin, qmax, indices, out);
}

template <EmbeddingDtypeOut Kernel>
void embedding_dtype_out_abi(ArgReader&& a) {
  auto weight = a.tensor(0, "weight");
  auto scales = a.tensor(1, "weight_scales");
  auto zps = a.optional_tensor(2, "weight_zero_points");
  auto qmin = a.integer(3, "weight_quant_min");
  auto qmax = a.integer(4, "weight_quant_max");
  auto indices = a.tensor(5, "indices");
  auto dtype = a.optional_scalar_type(6, "dtype");
  auto out = a.tensor(7, "out");
  if (a.ok()) Kernel(a.context(), weight, scales, zps, qmin, qmax, indices, dtype, out);
}

void embedding_byte_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_out_abi<embedding_byte_out>(ArgReader(c, "quantized_decomposed::embedding_byte.out", v, n, 7));
}
void embedding_byte_dtype_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_dtype_out_abi<embedding_byte_dtype_out>(
      ArgReader(c, "quantized_decomposed::embedding_byte.dtype_out", v, n, 8));
}
void embedding_2bit_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_out_abi<embedding_2bit_out>(ArgReader(c, "quantized_decomposed::embedding_2bit.out", v, n, 7));
}
void embedding_2bit_dtype_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_dtype_out_abi<embedding_2bit_dtype_out>(
      ArgReader(c, "quantized_decomposed::embedding_2bit.dtype_out", v, n, 8));
}
void embedding_4bit_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_out_abi<embedding_4bit_out>(ArgReader(c, "quantized_decomposed::embedding_4bit.out", v, n, 7));
}
void embedding_4bit_dtype_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  embedding_dtype_out_abi<embedding_4bit_dtype_out>(
      ArgReader(c, "quantized_decomposed::embedding_4bit.dtype_out", v, n, 8));
}

void mixed_mm_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::mixed_mm.out", v, n, 5);
  auto input = a.tensor(0, "input");
  auto weight = a.tensor(1, "weight");
  auto scales = a.tensor(2, "weight_scales");
  auto zps = a.optional_tensor(3, "weight_zero_points");
  auto out = a.tensor(4, "out");
  if (a.ok()) mixed_mm_out(a.context(), input, weight, scales, zps, out);
}

void mixed_linear_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::mixed_linear.out", v, n, 6);
  auto input = a.tensor(0, "input");
  auto weight = a.tensor(1, "weight");
  auto scales = a.tensor(2, "weight_scales");
  auto zps = a.optional_tensor(3, "weight_zero_points");
  auto dtype = a.optional_scalar_type(4, "dtype");
  auto out = a.tensor(5, "out");
  if (a.ok()) mixed_linear_out(a.context(), input, weight, scales, zps, dtype, out);
}

void add_out_abi(et_ops_kernel_context* c, et_ops_value* const* v, std::size_t n) {
  ArgReader a(c, "quantized_decomposed::add.out", v, n, 15);
  auto ta = a.tensor(0, "a");
  auto a_scale = a.floating(1, "a_scale");
  auto a_zp = a.integer(2, "a_zero_point");
  auto a_qmin = a.integer(3, "a_quant_min");
  auto a_qmax = a.integer(4, "a_quant_max");
  auto tb = a.tensor(5, "b");
  auto b_scale = a.floating(6, "b_scale");
  auto b_zp = a.integer(7, "b_zero_point");
  auto b_qmin = a.integer(8, "b_quant_min");
  auto b_qmax = a.integer(9, "b_quant_max");
  auto out_scale = a.floating(10, "out_scale");
  auto out_zp = a.integer(11, "out_zero_point");
  auto out_qmin = a.integer(12, "out_quant_min");
  auto out_qmax = a.integer(13, "out_quant_max");
  auto out = a.tensor(14, "out");
  if (a.ok())
    add_out(a.context(), ta, a_scale, a_zp, a_qmin, a_qmax, tb, b_scale, b_zp, b_qmin, b_qmax, out_scale, out_zp,
            out_qmin, out_qmax, out);
}

constexpr kernels::detail::OperatorEntry kOperators[] = {
#define ET_OPS_OPERATOR(function, name, schema) {name, schema, &function##_abi},
#include "operators.def"
#undef ET_OPS_OPERATOR
};

}  // namespace

const et_ops_manifest& manifest() {
  static const kernels::detail::StaticManifest instance(kComponent, ET_OPS_VERSION, ET_OPS_QUANTIZED_DIGEST,
                                                        kOperators, std::size(kOperators));
  return instance.manifest();
}

RegistrationResult register_kernels() { return register_manifest(manifest()); }

}  // namespace et_ops::kernels::quantized

#if !defined(ET_OPS_STATIC_KERNELS)
// The loadable-library entry point (see et_ops/abi.h). A private static copy
// of these kernels does not export it.
extern "C" ET_OPS_VISIBLE const et_ops_manifest* et_ops_kernel_library_manifest(void) {
  return &et_ops::kernels::quantized::manifest();
}
#endif
