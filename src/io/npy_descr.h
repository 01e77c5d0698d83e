// NumPy dtype descriptors ('<f4', '|i1', ...) of the program dtypes.
#ifndef ET_OPS_SRC_IO_NPY_DESCR_H
#define ET_OPS_SRC_IO_NPY_DESCR_H

#include <string>
#include <string_view>

#include "et_ops/dtype.h"

namespace et_ops::io {

// bfloat16 has no NumPy type: it is written as '<u2' (the raw bits).
std::string npy_descr(DType dtype);

// The dtype of a descriptor, or an error text in `error`.
DType dtype_of_descr(std::string_view descr, std::string& error);

}  // namespace et_ops::io

#endif  // ET_OPS_SRC_IO_NPY_DESCR_H
