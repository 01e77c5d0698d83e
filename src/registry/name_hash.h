// The hash of operator names: computed once per record at registration and
// once per lookup, so it must be cheap on 20-60 byte names. The wyhash
// construction (64x64->128-bit multiply-folds over 16-byte blocks).
#ifndef ET_OPS_SRC_REGISTRY_NAME_HASH_H
#define ET_OPS_SRC_REGISTRY_NAME_HASH_H

#include <cstdint>
#include <cstring>
#include <string_view>

namespace et_ops::detail {

inline uint64_t fold_multiply(uint64_t a, uint64_t b) {
  const __uint128_t product = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(product) ^ static_cast<uint64_t>(product >> 64);
}

inline uint64_t read64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline uint64_t read32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// 32 bits: the registry's index is addressed and tagged with it.
inline uint32_t hash_name(std::string_view name) {
  constexpr uint64_t k0 = 0xa0761d6478bd642full, k1 = 0xe7037ed1a0b428dbull, k2 = 0x8ebc6af09c88c6e3ull;
  const char* p = name.data();
  const std::size_t n = name.size();
  uint64_t seed = k0 ^ fold_multiply(n ^ k0, k1);
  uint64_t a = 0, b = 0;
  if (n <= 16) {
    if (n >= 4) {
      const std::size_t middle = (n >> 3) << 2;  // 0 or 4: the two halves overlap for short names
      a = (read32(p) << 32) | read32(p + middle);
      b = (read32(p + n - 4) << 32) | read32(p + n - 4 - middle);
    } else if (n > 0) {
      a = (uint64_t(uint8_t(p[0])) << 16) | (uint64_t(uint8_t(p[n >> 1])) << 8) | uint8_t(p[n - 1]);
    }
  } else {
    std::size_t left = n;
    while (left > 16) {
      seed = fold_multiply(read64(p) ^ k1, read64(p + 8) ^ seed);
      p += 16;
      left -= 16;
    }
    a = read64(p + left - 16);
    b = read64(p + left - 8);
  }
  const uint64_t hash = fold_multiply(k1 ^ n, fold_multiply(a ^ k1, b ^ seed ^ k2));
  return static_cast<uint32_t>(hash ^ (hash >> 32));
}

}  // namespace et_ops::detail

#endif  // ET_OPS_SRC_REGISTRY_NAME_HASH_H
