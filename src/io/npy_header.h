// The header of a .npy file: a Python dict literal with 'descr',
// 'fortran_order' and 'shape'.
#ifndef ET_OPS_SRC_IO_NPY_HEADER_H
#define ET_OPS_SRC_IO_NPY_HEADER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace et_ops::io {

struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Throws std::runtime_error saying what is wrong with the dict.
NpyHeader parse_npy_header(std::string_view text);

}  // namespace et_ops::io

#endif  // ET_OPS_SRC_IO_NPY_HEADER_H
