// The fixed part of an .etp file: magic, format version, header size, and
// where the header and the data segment lie.
#ifndef ET_OPS_SRC_RUNTIME_ETP_PREAMBLE_H
#define ET_OPS_SRC_RUNTIME_ETP_PREAMBLE_H

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "et_ops/program.h"

namespace et_ops::runtime {

inline constexpr std::size_t kPreambleBytes = 16;
inline constexpr uint32_t kOldestFormatVersion = 1;
inline constexpr uint32_t kFormatVersion = 2;  // the newest this runtime reads
inline constexpr std::size_t kDataAlignment = 64;

struct EtpLayout {
  uint32_t version = 0;
  std::string_view header;  // the JSON text
  const uint8_t* data = nullptr;  // the data segment (may be empty)
  std::size_t data_size = 0;
};

// Checks magic, version, header size against the file and the limits.
// Throws FormatError (without the file name; the caller adds it).
EtpLayout read_layout(const uint8_t* bytes, std::size_t size, const LoadLimits& limits);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_ETP_PREAMBLE_H
