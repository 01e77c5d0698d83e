// The quantized set's operators that programs run as prepared kernels
// (common/prepared_form.h): the low-bit linears repack their constant
// weights when a program loads and split their output channels over the
// run state's threads (lowbit_linear.h).
#ifndef ET_OPS_SRC_KERNELS_QUANTIZED_PREPARED_FORMS_H
#define ET_OPS_SRC_KERNELS_QUANTIZED_PREPARED_FORMS_H

#include "common/prepared_form.h"
#include "et_ops/kernels/quantized_operators.h"
#include "lowbit_linear.h"

namespace et_ops::kernels {

template <>
struct PreparedForm<quantized::op_name::linear_8da4w_out> : quantized::GroupedLinearKernel<quantized::k8da4w> {};
template <>
struct PreparedForm<quantized::op_name::linear_8da8w_out> : quantized::ChannelLinearKernel<quantized::k8da8w> {};
template <>
struct PreparedForm<quantized::op_name::linear_int4_out> : quantized::GroupedLinearKernel<quantized::kInt4> {};
template <>
struct PreparedForm<quantized::op_name::linear_int8_out> : quantized::ChannelLinearKernel<quantized::kInt8> {};

}  // namespace et_ops::kernels

#endif  // ET_OPS_SRC_KERNELS_QUANTIZED_PREPARED_FORMS_H
