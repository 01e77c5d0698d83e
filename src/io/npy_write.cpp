// Writing .npy files (format version 1.0, C order, little-endian).
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "et_ops/npy.h"
#include "io/npy_descr.h"
#include "io/tensor_layout.h"

namespace et_ops {
namespace {

constexpr std::size_t kPreambleBytes = 10;  // magic, version 1.0, u16 header length
constexpr std::size_t kHeaderAlignment = 64;

std::string shape_tuple(TensorRef tensor) {
  if (tensor.dim() == 1) return fmt::format("({},)", tensor.size(0));
  return fmt::format("({})", fmt::join(tensor.sizes(), tensor.sizes() + tensor.dim(), ", "));
}

// The dict, padded with spaces and ended by '\n' so the data starts at a
// multiple of 64 bytes, as NumPy writes it.
std::string header_text(TensorRef tensor) {
  std::string text = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 io::npy_descr(tensor.dtype()), shape_tuple(tensor));
  const std::size_t unpadded = kPreambleBytes + text.size() + 1;
  text.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  text.push_back('\n');
  return text;
}

}  // namespace

std::vector<uint8_t> encode_npy(TensorRef tensor) {
  const std::string header = header_text(tensor);
  std::vector<uint8_t> bytes(kPreambleBytes + header.size() + tensor.nbytes());
  std::memcpy(bytes.data(), "\x93NUMPY\x01\x00", 8);
  bytes[8] = static_cast<uint8_t>(header.size() & 0xFF);
  bytes[9] = static_cast<uint8_t>(header.size() >> 8);
  std::memcpy(bytes.data() + kPreambleBytes, header.data(), header.size());
  io::copy_to_logical_order(tensor, bytes.data() + kPreambleBytes + header.size());
  return bytes;
}

Status write_npy(const std::string& path, TensorRef tensor) {
  const std::vector<uint8_t> bytes = encode_npy(tensor);
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return Status(StatusCode::File, fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), file) == bytes.size();
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed)
    return Status(StatusCode::File, fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  return Status();
}

}  // namespace et_ops
