// Strided gather into C order with an odometer over the logical index.
#include "io/tensor_layout.h"

#include <cstring>

namespace et_ops::io {

void copy_to_logical_order(TensorRef tensor, uint8_t* out) {
  const std::size_t element = dtype_size(tensor.dtype());
  if (tensor.numel() == 0) return;
  const auto* in = static_cast<const uint8_t*>(tensor.data());
  if (tensor.is_contiguous()) {
    std::memcpy(out, in, tensor.nbytes());
    return;
  }
  const int64_t dims = tensor.dim();
  int64_t index[ET_OPS_MAX_DIMS] = {};
  int64_t offset = 0;  // elements, of the current logical index
  for (int64_t n = 0; n < tensor.numel(); ++n) {
    std::memcpy(out + static_cast<std::size_t>(n) * element, in + static_cast<std::size_t>(offset) * element, element);
    for (int64_t d = dims - 1; d >= 0; --d) {  // advance the innermost logical dimension
      offset += tensor.stride(d);
      if (++index[d] < tensor.size(d)) break;
      offset -= tensor.stride(d) * tensor.size(d);
      index[d] = 0;
    }
  }
}

}  // namespace et_ops::io
