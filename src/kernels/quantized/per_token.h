// The per-token quantization of the reference (choose_qparams_per_token_asymmetric,
// then quantize_per_token) as functions of the kernel set itself, so that a
// kernel quantizing its own activations calls them whether or not a selective
// build kept those two operators. Errors name the operator of each step.
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_PER_TOKEN_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_PER_TOKEN_H

#include <cstdint>

#include "et_ops/dtype.h"
#include "et_ops/kernel_context.h"
#include "et_ops/tensor.h"

namespace et_ops::kernels::quantized::detail {

// choose_qparams_per_token_asymmetric.out: scale_out f64 and zero_point_out
// i64 of one element per token of the f32 input.
bool choose_qparams_per_token(KernelContext& ctx, TensorRef input, TensorRef scale_out, TensorRef zero_point_out);

// quantize_per_token.out.
bool quantize_per_token(KernelContext& ctx, TensorRef input, TensorRef scales, TensorRef zero_points,
                        int64_t quant_min, int64_t quant_max, DType dtype, TensorRef out);

}  // namespace et_ops::kernels::quantized::detail

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_PER_TOKEN_H
