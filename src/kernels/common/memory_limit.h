// The bound on what a kernel asks for beyond its tensors: workspaces,
// packed weights, an engine's operator and its buffers (XNNPACK, oneDNN).
// A program's tensors are bounded when it loads (LoadLimits), but a kernel
// can derive far larger sizes from small tensors and extreme arguments (a
// 65535x65535 pooling window over a 3x3 image); a kernel checks each such
// request here, before it allocates or calls the engine, so that untrusted
// extents never size a buffer. docs/hardening.md ("Kernel limits").
//
// Sizes are computed with RequestBytes, which saturates: a product or sum
// that overflows is larger than every limit rather than wrapping around.
#ifndef ET_OPS_SRC_KERNELS_COMMON_MEMORY_LIMIT_H
#define ET_OPS_SRC_KERNELS_COMMON_MEMORY_LIMIT_H

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>

#include "common/tensor_checks.h"

namespace et_ops::kernels::detail {

// The default: LoadLimits::max_memory_bytes' default, the most one tensor may hold.
inline constexpr uint64_t kDefaultKernelMemoryLimit = uint64_t(1) << 30;
// The environment variable that replaces it (bytes, a positive decimal integer).
inline constexpr const char* kKernelMemoryLimitVariable = "ET_OPS_KERNEL_MAX_BYTES";

// A byte count that saturates at the largest uint64_t instead of wrapping.
class RequestBytes {
 public:
  constexpr RequestBytes(uint64_t bytes = 0) : bytes_(bytes) {}  // NOLINT: a count converts implicitly
  // The product of `factors` (element counts, extents, element sizes).
  static RequestBytes product(std::initializer_list<uint64_t> factors) {
    uint64_t result = 1;
    for (uint64_t f : factors)
      if (__builtin_mul_overflow(result, f, &result)) return saturated();
    return RequestBytes(result);
  }
  RequestBytes operator+(RequestBytes other) const {
    uint64_t sum = 0;
    return __builtin_add_overflow(bytes_, other.bytes_, &sum) ? saturated() : RequestBytes(sum);
  }
  RequestBytes operator*(RequestBytes other) const { return product({bytes_, other.bytes_}); }
  uint64_t bytes() const { return bytes_; }
  bool overflowed() const { return bytes_ == std::numeric_limits<uint64_t>::max(); }

 private:
  static RequestBytes saturated() { return RequestBytes(std::numeric_limits<uint64_t>::max()); }
  uint64_t bytes_;
};

// The limit in force: ET_OPS_KERNEL_MAX_BYTES when set, else the default;
// 0 when the variable is set to something other than a positive integer
// (every request then fails, with a message that says why). Read at each
// check (kernels check when they are prepared, not in their runs).
inline uint64_t kernel_memory_limit() {
  const char* text = std::getenv(kKernelMemoryLimitVariable);
  if (text == nullptr || *text == '\0') return kDefaultKernelMemoryLimit;
  char* end = nullptr;
  errno = 0;
  const unsigned long long value = std::strtoull(text, &end, 10);
  if (errno != 0 || *end != '\0' || *text == '-' || value == 0) return 0;
  return value;
}

// Reports, naming the operator, what is requested (`what`, e.g. "XNNPACK's
// indirection buffer") and for what (`sizes`, e.g. "a 65535x65535 window
// over 1x3 output pixels"), when `bytes` exceeds the limit.
inline bool check_kernel_memory(KernelContext& ctx, const char* op, const char* what, RequestBytes bytes,
                                const std::string& sizes) {
  const uint64_t limit = kernel_memory_limit();
  if (limit == 0)
    return fail(ctx, op, "{}={} is not a positive number of bytes", kKernelMemoryLimitVariable,
                std::getenv(kKernelMemoryLimitVariable));
  if (bytes.bytes() <= limit) return true;
  const std::string amount = bytes.overflowed() ? std::string("more than 2^64 bytes")
                                                : fmt::format("{} bytes", bytes.bytes());
  return fail(ctx, op, "{} for {} would take {}, beyond the kernel memory limit of {} bytes (raise it with {})", what,
              sizes, amount, limit, kKernelMemoryLimitVariable);
}

}  // namespace et_ops::kernels::detail

#endif  // ET_OPS_SRC_KERNELS_COMMON_MEMORY_LIMIT_H
