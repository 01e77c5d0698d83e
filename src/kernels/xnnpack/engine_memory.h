// What the engines will allocate for an operator of this set, bounded by
// the kernel memory limit (common/memory_limit.h) when the kernel is
// prepared, before XNNPACK or oneDNN is asked for anything: a program's
// small tensors with extreme windows, paddings or channel counts would
// otherwise let XNNPACK size a buffer of any size from them.
#ifndef ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_MEMORY_H
#define ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_MEMORY_H

#include "common/memory_limit.h"
#include "convolution.h"

namespace et_ops::kernels::xnnpack {
struct PoolingState;
}

namespace et_ops::kernels::xnnpack::detail {

using kernels::detail::RequestBytes;

// XNNPACK's packed weights of a qc8 convolution or fully connected
// operator (int8 weights in tiles, an int32 bias and a float scale per
// output channel), rounded up as its widest x86 tiles round them.
RequestBytes convolution_packed_weights(const ConvolutionGeometry& g);
// The indirection buffer XNNPACK builds when it sets a convolution up: a
// pointer per kernel tap and output pixel (none for a 1x1 convolution
// without stride or padding, which runs as a matrix product).
RequestBytes convolution_indirection(const ConvolutionGeometry& g);
// The same for max pooling: a pointer per window element and output pixel,
// less what neighbouring windows share.
RequestBytes max_pooling_indirection(uint32_t kernel_height, uint32_t kernel_width, uint32_t stride_width,
                                     uint32_t dilation_width, int64_t out_height, int64_t out_width);

// Both of a convolution's, checked against the limit; the error names the
// operator, the buffer and the geometry.
bool check_convolution_memory(KernelContext& ctx, const char* op, const ConvolutionGeometry& g);
// Max pooling's indirection buffer for `s` (its window, stride and
// dilation) and its output extents, checked against the limit.
bool check_max_pooling_memory(KernelContext& ctx, const char* op, const PoolingState& s, int64_t out_height,
                              int64_t out_width);

}  // namespace et_ops::kernels::xnnpack::detail

#endif  // ET_OPS_SRC_KERNELS_XNNPACK_ENGINE_MEMORY_H
