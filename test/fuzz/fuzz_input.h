// Typed choices read from fuzzer bytes. Past the end every read yields
// zero, so every input, however short, decodes to some call: libFuzzer's
// mutations then steer each choice byte by byte.
#ifndef ET_OPS_TEST_FUZZ_FUZZ_INPUT_H
#define ET_OPS_TEST_FUZZ_FUZZ_INPUT_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace et_ops::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }

  // A value in [0, n); n must be in [1, 256] (one byte per choice keeps the
  // encoding easy for the fuzzer to mutate).
  std::size_t below(std::size_t n) { return byte() % n; }

  // True with probability about `in_256` / 256.
  bool chance(unsigned in_256) { return byte() < in_256; }

  template <typename T, std::size_t N>
  T pick(const T (&choices)[N]) {
    return choices[below(N)];
  }

  // Raw little-endian bytes of a T (zero-filled past the end).
  template <typename T>
  T raw() {
    uint8_t bytes[sizeof(T)] = {};
    for (uint8_t& b : bytes) b = byte();
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  }

  // A name ended by a NUL byte (or the input's end), at most 128 bytes.
  std::string name() {
    std::string s;
    for (uint8_t c = byte(); c != 0 && s.size() < 128; c = byte()) s += static_cast<char>(c);
    return s;
  }

  bool exhausted() const { return pos_ >= size_; }

 private:
  const uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace et_ops::fuzz

#endif  // ET_OPS_TEST_FUZZ_FUZZ_INPUT_H
