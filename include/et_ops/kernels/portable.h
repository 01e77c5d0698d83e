// libet_kernels_portable.so: the aten `.out` kernels that exported models
// need around their quantized layers: elementwise arithmetic (add, sub, mul,
// div), activations (relu, hardtanh, clamp, leaky_relu, hardswish,
// hardsigmoid, sigmoid, tanh, gelu, silu), matrix products, convolution,
// pooling (max, average, adaptive average), mean, sum, max, softmax,
// log_softmax, normalization (layer, group), unary math (abs, sqrt, rsqrt,
// exp, neg, pow), comparisons, selection (where, masked_fill), indexing
// (embedding, index, index_select, index_put, index_copy) and copies (view,
// permute, slice, select, expand, cat, constant padding, nearest upsampling,
// dtype casts).
//
// Call register_kernels() once (more calls are no-ops) to make them
// available to programs, or call a kernel directly through the typed entry
// points of et_ops/kernels/portable_operators.h (generated from the
// library's operator table): the context first, then the schema's arguments
// in order, out arguments last. Every entry point reports errors through its KernelContext
// and returns ctx.ok(); none of them aborts or resizes its outputs: an out
// tensor must already have exactly the result's shape and dtype.
// Dtypes: arithmetic, relu, hardtanh and clamp take float32, float64, int8,
// uint8, int16, int32 and int64 (div and the other activations float32 and
// float64), never promoted; tensor operands broadcast as in PyTorch; matrix
// products and convolution compute float32 in float64, rounded once; copies
// take every dtype. The kernels-portable page of the documentation lists
// dtypes, semantics and tolerances.
#ifndef ET_OPS_KERNELS_PORTABLE_H
#define ET_OPS_KERNELS_PORTABLE_H

#include "et_ops/kernels/portable_operators.h"

namespace et_ops::kernels::portable {

// The argument types of the aten kernels (et_ops/scalar.h, et_ops/int_list.h).
using Scalar = ::et_ops::Scalar;
using IntList = ::et_ops::IntList;

}  // namespace et_ops::kernels::portable

#endif  // ET_OPS_KERNELS_PORTABLE_H
