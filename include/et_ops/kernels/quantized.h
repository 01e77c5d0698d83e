// libet_kernels_quantized.so: the 19 quantized_decomposed overloads,
// the group-wise weight dequantizes and the fused low-bit linear kernels.
//
// Call register_kernels() once (more calls are no-ops) to make them
// available to programs, or call a kernel directly through the typed entry
// points of et_ops/kernels/quantized_operators.h (generated from the
// library's operator table): the context first, then the schema's arguments
// in order, out arguments last. Every entry point reports errors through its KernelContext
// and returns ctx.ok(); none of them aborts or resizes its outputs.
#ifndef ET_OPS_KERNELS_QUANTIZED_H
#define ET_OPS_KERNELS_QUANTIZED_H

#include <cstddef>

#include "et_ops/kernels/quantized_operators.h"

namespace et_ops::kernels::quantized {

// ---- non-temporal stores ----
// quantize, dequantize and add write their output with non-temporal stores
// once one contiguous run of a call moves at least streaming_threshold_bytes()
// (bytes read plus bytes written): data that large cannot stay in the cache
// for the next operator anyway, and streaming saves reading every destination
// line before writing it. Smaller outputs use ordinary stores, which leave
// them in the cache for the next operator. The results are the same bits
// either way. By default the threshold is half the size of the machine's
// last-level cache, as the operating system reports it.

// The size in bytes of the largest cache the operating system reports for
// this machine (/sys/devices/system/cpu/cpu0/cache, else sysconf), or 0 when
// it reports none.
ET_OPS_KERNELS_API std::size_t last_level_cache_bytes();

// The threshold in effect: set_streaming_threshold_bytes()'s value, else
// last_level_cache_bytes() / 2, else 16 MiB when the machine reports no cache.
ET_OPS_KERNELS_API std::size_t streaming_threshold_bytes();

// Overrides the threshold for the whole process (0 streams every run that
// is at least one vector long; SIZE_MAX never streams). Thread-safe.
ET_OPS_KERNELS_API void set_streaming_threshold_bytes(std::size_t bytes);

// Returns to the default threshold.
ET_OPS_KERNELS_API void reset_streaming_threshold_bytes();

}  // namespace et_ops::kernels::quantized

#endif  // ET_OPS_KERNELS_QUANTIZED_H
