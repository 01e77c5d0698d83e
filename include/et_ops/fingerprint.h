// Fingerprints. A kernel library's digest is computed at build time
// (et-ops-fingerprint): SHA-256 over its source files (names and contents)
// and the compiler settings that affect numerics, 64 hex digits. Each
// operator's fingerprint combines that digest with the operator's name into
// 128 bits, written as 32 hex digits: two 64-bit FNV-1a hashes. It tells
// copies built from the same sources and settings from other builds; it is
// not a cryptographic signature.
#ifndef ET_OPS_FINGERPRINT_H
#define ET_OPS_FINGERPRINT_H

#include <cstdint>
#include <string>
#include <string_view>

namespace et_ops {

namespace detail {
inline uint64_t fnv1a64(std::string_view bytes, uint64_t state) {
  for (unsigned char c : bytes) {
    state ^= c;
    state *= 0x100000001b3ULL;
  }
  return state;
}
}  // namespace detail

// 32 hex digits; equal digests and names give equal fingerprints, and a
// change to either changes it.
inline std::string operator_fingerprint(std::string_view library_digest, std::string_view op) {
  static const char* hex = "0123456789abcdef";
  const uint64_t parts[2] = {
      detail::fnv1a64(op, detail::fnv1a64(library_digest, 0xcbf29ce484222325ULL) ^ 0x2f),
      detail::fnv1a64(library_digest, detail::fnv1a64(op, 0x84222325cbf29ce4ULL) ^ 0x5c),
  };
  std::string out;
  for (uint64_t p : parts)
    for (int shift = 60; shift >= 0; shift -= 4) out.push_back(hex[(p >> shift) & 0xF]);
  return out;
}

}  // namespace et_ops

#endif  // ET_OPS_FINGERPRINT_H
