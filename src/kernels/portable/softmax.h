// The softmax of one contiguous row, as aten::_softmax.out computes each
// lane: shared with the fused attention, so that its probabilities are the
// same bits as the unfused operators'.
#ifndef ET_OPS_SRC_KERNELS_PORTABLE_SOFTMAX_H
#define ET_OPS_SRC_KERNELS_PORTABLE_SOFTMAX_H

#include <cstdint>

namespace et_ops::kernels::portable::detail {

// out[i] = exp(in[i] - max) / sum of them, i < length; out may be in.
void softmax_row(const float* in, float* out, int64_t length);

}  // namespace et_ops::kernels::portable::detail

#endif  // ET_OPS_SRC_KERNELS_PORTABLE_SOFTMAX_H
