// Copying a tensor's elements between its memory layout (any dim order)
// and logical row-major (C) order.
#ifndef ET_OPS_SRC_IO_TENSOR_LAYOUT_H
#define ET_OPS_SRC_IO_TENSOR_LAYOUT_H

#include <cstdint>

#include "et_ops/tensor.h"

namespace et_ops::io {

// Writes tensor.nbytes() bytes to `out` in logical C order.
void copy_to_logical_order(TensorRef tensor, uint8_t* out);

}  // namespace et_ops::io

#endif  // ET_OPS_SRC_IO_TENSOR_LAYOUT_H
