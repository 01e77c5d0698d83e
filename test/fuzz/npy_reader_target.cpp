// Fuzz target: .npy bytes. Parsing must never crash and must explain every
// refusal; an array that parses has exactly the bytes its shape and dtype
// promise, and writing it again and reading that back gives the same array.
#include <cstdint>
#include <vector>

#include "et_ops/npy.h"
#include "et_ops/tensor.h"
#include "fuzz_targets.h"

namespace et_ops::fuzz {
namespace {

constexpr const char* kTarget = "npy_reader";

void check_round_trip(NpyArray& array) {
  if (array.shape.size() > ET_OPS_MAX_DIMS) target_failure(kTarget, "an accepted array has too many dimensions");
  Tensor tensor(array.dtype, array.data.data(), array.shape);
  if (tensor.ref().nbytes() != array.data.size()) target_failure(kTarget, "an accepted array has the wrong byte count");
  const std::vector<uint8_t> encoded = encode_npy(tensor);
  const Result<NpyArray> parsed = parse_npy(encoded.data(), encoded.size(), "re-encoded");
  if (!parsed) target_failure(kTarget, parsed.status().message().c_str());
  const NpyArray& again = *parsed;
  if (again.dtype != array.dtype || again.shape != array.shape || again.data != array.data)
    target_failure(kTarget, "writing and reading an accepted array changed it");
}

}  // namespace

int fuzz_npy_reader(const uint8_t* data, std::size_t size) {
  Result<NpyArray> array = parse_npy(data, size, "fuzz.npy");
  if (!array.ok()) return 0;
  check_round_trip(*array);
  return 0;
}

}  // namespace et_ops::fuzz
