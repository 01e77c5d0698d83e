// When the streaming kernels switch to non-temporal stores: by default at
// half the size of the last-level cache the machine reports, overridable for the
// process, and restorable.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <limits>
#include <string>

#include "et_ops/kernels/quantized.h"

namespace q = et_ops::kernels::quantized;

namespace {

// The largest cache in /sys/devices/system/cpu/cpu0/cache, read
// independently of the library ("48K", "2048K", "260M"); 0 if none.
std::size_t largest_sysfs_cache() {
  std::size_t largest = 0;
  for (int index = 0;; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(file >> text)) break;
    std::size_t unit = 1;
    if (text.back() == 'K') unit = std::size_t{1} << 10;
    if (text.back() == 'M') unit = std::size_t{1} << 20;
    if (text.back() == 'G') unit = std::size_t{1} << 30;
    if (unit != 1) text.pop_back();
    largest = std::max(largest, static_cast<std::size_t>(std::stoull(text)) * unit);
  }
  return largest;
}

}  // namespace

TEST_CASE("the default threshold is half the last-level cache the machine reports") {
  const std::size_t sysfs = largest_sysfs_cache();
  if (sysfs != 0) CHECK(q::last_level_cache_bytes() == sysfs);
  const std::size_t cache = q::last_level_cache_bytes();
  const std::size_t expected = cache != 0 ? cache / 2 : std::size_t{16} << 20;
  CHECK(q::streaming_threshold_bytes() == expected);
}

TEST_CASE("the threshold can be overridden for the process and reset") {
  const std::size_t default_threshold = q::streaming_threshold_bytes();
  for (std::size_t bytes : {std::size_t{0}, std::size_t{4096}, std::numeric_limits<std::size_t>::max()}) {
    q::set_streaming_threshold_bytes(bytes);
    CHECK(q::streaming_threshold_bytes() == bytes);
  }
  q::reset_streaming_threshold_bytes();
  CHECK(q::streaming_threshold_bytes() == default_threshold);
}
