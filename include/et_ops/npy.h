// NumPy .npy files (C order, little-endian) for program inputs and outputs.
#ifndef ET_OPS_NPY_H
#define ET_OPS_NPY_H

#include <cstdint>
#include <string>
#include <vector>

#include "et_ops/dtype.h"
#include "et_ops/export.h"
#include "et_ops/status.h"
#include "et_ops/tensor.h"

namespace et_ops {

struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order, little-endian
};

// Reads a .npy file (format versions 1.0 to 3.0) of one of the program
// dtypes: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <i8 |b1. NumPy has no bfloat16:
// bfloat16 tensors are written as <u2 arrays of the raw bits, and a <u2
// array is accepted for a bfloat16 program input. Errors (File: cannot open
// or read; Format: not a .npy array et_ops reads) name the file and what is
// wrong with it.
ET_OPS_API Result<NpyArray> read_npy(const std::string& path);
ET_OPS_API Result<NpyArray> parse_npy(const uint8_t* bytes, std::size_t size, const std::string& name = "<memory>");

// Writes `tensor` (any dim order; written in logical C order). File when the
// file cannot be created or written.
ET_OPS_API Status write_npy(const std::string& path, TensorRef tensor);
ET_OPS_API std::vector<uint8_t> encode_npy(TensorRef tensor);

}  // namespace et_ops

#endif  // ET_OPS_NPY_H
