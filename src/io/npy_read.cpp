// Reading .npy files (format versions 1.0, 2.0 and 3.0).
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "et_ops/npy.h"
#include "io/npy_descr.h"
#include "io/npy_header.h"

namespace et_ops {
namespace {

constexpr std::size_t kMagicBytes = 6;  // "\x93NUMPY"

struct Preamble {
  std::size_t header_offset = 0;
  std::size_t header_size = 0;
};

// Returns an empty error when the magic, version and header length are sound.
std::string read_preamble(const uint8_t* bytes, std::size_t size, Preamble& preamble) {
  if (size < kMagicBytes + 4 || std::memcmp(bytes, "\x93NUMPY", kMagicBytes) != 0)
    return "not a .npy file (no \\x93NUMPY magic)";
  const unsigned major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    return fmt::format("unsupported .npy format version {}.{} (supported: 1.0, 2.0, 3.0)", major, minor);
  if (major == 1) {
    preamble.header_offset = 10;
    preamble.header_size = std::size_t(bytes[8]) | std::size_t(bytes[9]) << 8;
  } else {
    if (size < 12) return "the file ends inside the .npy preamble";
    preamble.header_offset = 12;
    preamble.header_size = std::size_t(bytes[8]) | std::size_t(bytes[9]) << 8 | std::size_t(bytes[10]) << 16 |
                           std::size_t(bytes[11]) << 24;
  }
  if (preamble.header_size > size - preamble.header_offset)
    return fmt::format("the header length {} runs past the end of the file ({} bytes)", preamble.header_size, size);
  return {};
}

std::string check_shape(const std::vector<int64_t>& shape, DType dtype, std::size_t& nbytes) {
  if (shape.size() > ET_OPS_MAX_DIMS)
    return fmt::format("the array has {} dimensions; at most {} are supported", shape.size(), ET_OPS_MAX_DIMS);
  // Every partial product of the sizes (so every stride) must fit in int64,
  // not only the byte count, which a zero size would hide: (0, 2**62, 4)
  // has no bytes but strides that overflow.
  int64_t bound = static_cast<int64_t>(dtype_size(dtype));
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bound, d > 0 ? d : 1, &bound)) return "the array size overflows";
  uint64_t count = dtype_size(dtype);
  for (int64_t d : shape) count *= static_cast<uint64_t>(d);  // within the bound checked above
  nbytes = count;
  return {};
}

Status failed(const std::string& name, const std::string& what, StatusCode code = StatusCode::Format) {
  return Status(code, fmt::format("{}: {}", name, what));
}

}  // namespace

Result<NpyArray> parse_npy(const uint8_t* bytes, std::size_t size, const std::string& name) {
  Preamble preamble;
  if (std::string error = read_preamble(bytes, size, preamble); !error.empty()) return failed(name, error);
  NpyArray array;
  std::size_t nbytes = 0;
  try {
    const io::NpyHeader header = io::parse_npy_header(
        std::string_view(reinterpret_cast<const char*>(bytes + preamble.header_offset), preamble.header_size));
    if (header.fortran_order) return failed(name, "Fortran-order arrays are not supported; save a C-order array");
    std::string error;
    array.dtype = io::dtype_of_descr(header.descr, error);
    if (error.empty()) error = check_shape(header.shape, array.dtype, nbytes);
    if (!error.empty()) return failed(name, error);
    array.shape = header.shape;
  } catch (const std::runtime_error& e) {
    return failed(name, e.what());
  }
  const std::size_t data_offset = preamble.header_offset + preamble.header_size;
  if (size - data_offset != nbytes)
    return failed(name, fmt::format("the array needs {} bytes of data but the file has {}", nbytes, size - data_offset));
  array.data.assign(bytes + data_offset, bytes + size);
  return array;
}

Result<NpyArray> read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return failed(path, fmt::format("cannot open: {}", std::strerror(errno)), StatusCode::File);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return failed(path, "cannot read the file", StatusCode::File);
  return parse_npy(bytes.data(), bytes.size(), path);
}

}  // namespace et_ops
