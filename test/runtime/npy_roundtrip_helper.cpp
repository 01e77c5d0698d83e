// Reads a .npy file with et_ops and writes it back: the NumPy
// interoperability test (npy_numpy_test.py) drives it. Exit status 1 and
// the error on stderr when the file is refused.
#include <cstdio>

#include "et_ops/npy.h"
#include "et_ops/tensor.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s IN.npy OUT.npy\n", argv[0]);
    return 2;
  }
  et_ops::Result<et_ops::NpyArray> array = et_ops::read_npy(argv[1]);
  if (!array) {
    std::fprintf(stderr, "%s\n", array.status().message().c_str());
    return 1;
  }
  et_ops::Tensor tensor(array->dtype, array->data.data(), array->shape);
  if (const et_ops::Status written = et_ops::write_npy(argv[2], tensor); !written) {
    std::fprintf(stderr, "%s\n", written.message().c_str());
    return 1;
  }
  return 0;
}
