// When the streaming kernels switch to non-temporal stores (see
// et_ops/kernels/quantized.h): from the size of the last-level cache the
// machine reports, read once, unless the process overrides it.
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include "et_ops/kernels/quantized.h"

namespace et_ops::kernels::quantized {
namespace {

// When the machine reports no cache size at all (some virtual machines):
// half the last-level cache of a typical current desktop or server CPU.
constexpr std::size_t kUnreportedCacheThreshold = std::size_t{16} << 20;

// "48K", "2048K", "32M": the size format of /sys/devices/system/cpu/cpu0/cache/index*/size.
std::size_t parse_sysfs_size(const std::string& text) {
  std::size_t value = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] >= '0' && text[i] <= '9'; ++i) value = value * 10 + std::size_t(text[i] - '0');
  if (i == 0) return 0;
  if (i < text.size() && text[i] == 'K') return value << 10;
  if (i < text.size() && text[i] == 'M') return value << 20;
  if (i < text.size() && text[i] == 'G') return value << 30;
  return value;
}

std::size_t largest_sysfs_cache() {
  std::size_t largest = 0;
  for (int index = 0; index < 16; ++index) {
    std::ifstream file("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/size");
    std::string text;
    if (!(file >> text)) break;
    const std::size_t size = parse_sysfs_size(text);
    if (size > largest) largest = size;
  }
  return largest;
}

std::size_t largest_sysconf_cache() {
  std::size_t largest = 0;
  for (int name : {_SC_LEVEL1_DCACHE_SIZE, _SC_LEVEL2_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL4_CACHE_SIZE}) {
    const long size = sysconf(name);
    if (size > 0 && static_cast<std::size_t>(size) > largest) largest = static_cast<std::size_t>(size);
  }
  return largest;
}

// The kernel's view first (sysfs), then glibc's (sysconf, from cpuid).
std::size_t detect_last_level_cache() {
  const std::size_t reported = largest_sysfs_cache();
  return reported != 0 ? reported : largest_sysconf_cache();
}

// Half the last-level cache: a run that moves more cannot stay cached beside
// everything else, and measured on a machine whose cache is shared with other
// cores (bench/streaming_sweep.py), non-temporal stores pay off from there on
// and lose below it.
std::size_t default_threshold() {
  static const std::size_t bytes = [] {
    const std::size_t cache = last_level_cache_bytes();
    return cache != 0 ? cache / 2 : kUnreportedCacheThreshold;
  }();
  return bytes;
}

std::atomic<std::size_t>& threshold() {
  static std::atomic<std::size_t> bytes{default_threshold()};
  return bytes;
}

}  // namespace

std::size_t last_level_cache_bytes() {
  static const std::size_t bytes = detect_last_level_cache();
  return bytes;
}

std::size_t streaming_threshold_bytes() { return threshold().load(std::memory_order_relaxed); }

void set_streaming_threshold_bytes(std::size_t bytes) { threshold().store(bytes, std::memory_order_relaxed); }

void reset_streaming_threshold_bytes() { threshold().store(default_threshold(), std::memory_order_relaxed); }

}  // namespace et_ops::kernels::quantized
