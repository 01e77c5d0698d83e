// Reading the 16-byte preamble of an .etp file.
#include "runtime/etp_preamble.h"

#include <fmt/format.h>

#include <cstring>

#include "runtime/load_errors.h"

namespace et_ops::runtime {
namespace {

uint32_t read_u32_le(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

uint64_t read_u64_le(const uint8_t* p) { return uint64_t(read_u32_le(p)) | uint64_t(read_u32_le(p + 4)) << 32; }

void check_magic(const uint8_t* bytes) {
  if (std::memcmp(bytes, "ETOP", 4) == 0) return;
  throw FormatError(fmt::format("wrong magic {:02x} {:02x} {:02x} {:02x}: not an .etp program (expected 'ETOP')",
                                bytes[0], bytes[1], bytes[2], bytes[3]));
}

}  // namespace

EtpLayout read_layout(const uint8_t* bytes, std::size_t size, const LoadLimits& limits) {
  if (size < kPreambleBytes)
    throw FormatError(fmt::format("the file is {} bytes, shorter than the {}-byte .etp preamble", size,
                                  kPreambleBytes));
  check_magic(bytes);
  const uint32_t version = read_u32_le(bytes + 4);
  if (version < kOldestFormatVersion || version > kFormatVersion)
    throw FormatError(fmt::format("unsupported .etp format version {} (this runtime reads versions {} to {})",
                                  version, kOldestFormatVersion, kFormatVersion));
  const uint64_t header_size = read_u64_le(bytes + 8);
  if (header_size > limits.max_header_bytes)
    throw FormatError(fmt::format("header size {} bytes exceeds the limit of {} bytes", header_size,
                                  limits.max_header_bytes));
  if (header_size > size - kPreambleBytes)
    throw FormatError(fmt::format("header size {} bytes runs past the end of the file ({} bytes)", header_size,
                                  size));
  EtpLayout layout;
  layout.version = version;
  layout.header = std::string_view(reinterpret_cast<const char*>(bytes + kPreambleBytes), header_size);
  // The data segment starts at the next multiple of 64 after the header; a
  // program without constants may end before it.
  const std::size_t header_end = kPreambleBytes + header_size;
  const std::size_t data_start = (header_end + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
  if (data_start < size) {
    layout.data = bytes + data_start;
    layout.data_size = size - data_start;
  }
  return layout;
}

}  // namespace et_ops::runtime
