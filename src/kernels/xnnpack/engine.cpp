// Starting XNNPACK and the shared argument checks.
#include "engine.h"

#include <cpuinfo.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdlib>
#include <limits>
#include <string_view>

namespace et_ops::kernels::xnnpack::detail {

namespace {

constexpr const char* kMaxIsaVariable = "ET_OPS_XNNPACK_MAX_ISA";
constexpr const char* kOnednnVariable = "ET_OPS_XNNPACK_ONEDNN";

// ET_OPS_XNNPACK_MAX_ISA lets tests and benchmarks run each path on one
// machine: avx2 makes XNNPACK choose the microkernels of an AVX2 machine on
// an AVX-512 one (cpuinfo's AVX-512 flags cleared before XNNPACK reads
// them) and caps oneDNN at AVX2; avx2vnni does the same with oneDNN capped
// at AVX2 with AVX-VNNI (a 256-bit vpdpbusd without AVX-512, as on Intel's
// Alder Lake and later), so that convolutions take oneDNN's AVX-VNNI
// kernels where the CPU has them; avx512 caps oneDNN at AVX-512 without
// VNNI (Skylake's), XNNPACK keeping its AVX-512 microkernels.
// oneDNN is one library per process (PyTorch uses Debian's too): once
// something has used it, its cap is fixed, and the cap holds where oneDNN
// already stays within it (ONEDNN_MAX_CPU_ISA set when the process started).
enum class CapOutcome { applied, invalid, onednn_in_use };
CapOutcome cap_onednn(dnnl::cpu_isa cap) {
  if (dnnl::set_max_cpu_isa(cap) == dnnl::status::success) return CapOutcome::applied;
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  return (effective & ~static_cast<unsigned>(cap)) == 0 ? CapOutcome::applied : CapOutcome::onednn_in_use;
}

CapOutcome apply_max_isa(std::string_view cap) {
  if (cap.empty() || cap == "native") return CapOutcome::applied;
  if (cap != "avx2" && cap != "avx2vnni" && cap != "avx512") return CapOutcome::invalid;
  if (cap == "avx512") return cap_onednn(dnnl::cpu_isa::avx512_core);
  if (!cpuinfo_initialize()) return CapOutcome::invalid;
  cpuinfo_isa.avx512f = cpuinfo_isa.avx512pf = cpuinfo_isa.avx512er = cpuinfo_isa.avx512cd = false;
  cpuinfo_isa.avx512dq = cpuinfo_isa.avx512bw = cpuinfo_isa.avx512vl = cpuinfo_isa.avx512ifma = false;
  cpuinfo_isa.avx512vbmi = cpuinfo_isa.avx512vbmi2 = cpuinfo_isa.avx512bitalg = false;
  cpuinfo_isa.avx512vpopcntdq = cpuinfo_isa.avx512vnni = cpuinfo_isa.avx512bf16 = false;
  cpuinfo_isa.avx512vp2intersect = cpuinfo_isa.avx512_4vnniw = cpuinfo_isa.avx512_4fmaps = false;
  return cap_onednn(cap == "avx2vnni" ? dnnl::cpu_isa::avx2_vnni : dnnl::cpu_isa::avx2);
}

const char* max_isa() {
  static const char* const cap = std::getenv(kMaxIsaVariable);
  return cap;
}

const char* onednn_setting() {
  static const char* const setting = std::getenv(kOnednnVariable);
  return setting;
}

bool valid_onednn_setting(std::string_view setting) { return setting.empty() || setting == "0" || setting == "1"; }

}  // namespace

bool onednn_allowed() {
  const std::string_view setting = onednn_setting() ? onednn_setting() : "";
  return setting != "0";
}

bool initialize(KernelContext& ctx, const char* op) {
  static const char* const cap = max_isa();
  static const CapOutcome capped = apply_max_isa(cap ? cap : "");
  static const xnn_status status =
      capped == CapOutcome::applied ? xnn_initialize(nullptr) : xnn_status_invalid_parameter;
  if (capped == CapOutcome::invalid)
    return fail(ctx, op, "{}='{}' is not valid: use avx2, avx2vnni, avx512 or native", kMaxIsaVariable, cap ? cap : "");
  if (capped == CapOutcome::onednn_in_use)
    return fail(ctx, op,
                "{}='{}' cannot cap oneDNN: the process used it before (PyTorch does); set ONEDNN_MAX_CPU_ISA "
                "(AVX2, AVX2_VNNI or AVX512_CORE) before the process starts as well",
                kMaxIsaVariable, cap);
  if (!valid_onednn_setting(onednn_setting() ? onednn_setting() : ""))
    return fail(ctx, op, "{}='{}' is not valid: use 0 (convolutions on XNNPACK alone) or 1", kOnednnVariable,
                onednn_setting());
  if (status == xnn_status_success) return true;
  return fail(ctx, op, "XNNPACK cannot start on this CPU (xnn_initialize: xnn_status {})", static_cast<int>(status));
}

namespace {

const char* status_name(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

}  // namespace

bool check_status(KernelContext& ctx, const char* op, xnn_status status, const char* call) {
  if (status == xnn_status_success) return true;
  return fail(ctx, op, "XNNPACK {} failed: {} (xnn_status {})", call, status_name(status), static_cast<int>(status));
}

bool check_scale(KernelContext& ctx, const char* op, const char* name, double scale) {
  if (std::isfinite(scale) && scale > 0.0 && scale >= std::numeric_limits<float>::min() &&
      scale <= std::numeric_limits<float>::max())
    return true;
  return fail(ctx, op, "{} must be a positive, finite scale (a normal float32), got {}", name, scale);
}

bool check_zero_point(KernelContext& ctx, const char* op, const char* name, int64_t zero_point) {
  if (zero_point >= INT8_MIN && zero_point <= INT8_MAX) return true;
  return fail(ctx, op, "{} must lie in [-128, 127] (int8), got {}", name, zero_point);
}

bool check_output_range(KernelContext& ctx, const char* op, int64_t output_min, int64_t output_max) {
  if (output_min >= INT8_MIN && output_max <= INT8_MAX && output_min < output_max) return true;
  return fail(ctx, op, "output_min and output_max must satisfy -128 <= output_min < output_max <= 127, got {} and {}",
              output_min, output_max);
}

bool check_activation(KernelContext& ctx, const char* op, const char* name, TensorRef t, int64_t rank) {
  if (!check_dtype(ctx, op, name, t, DType::Int8)) return false;
  if (t.dim() != rank) return fail(ctx, op, "{} must have {} dimensions, got {} ({})", name, rank, t.dim(), shape_string(t));
  for (int64_t d = 0; d < rank; ++d)
    if (t.size(d) <= 0) return fail(ctx, op, "{} has an empty dimension {} ({})", name, d, shape_string(t));
  return true;
}

bool has_dim_order(TensorRef t, const int64_t* order) {
  int64_t expected = 1;
  for (int64_t i = t.dim(); i-- > 0;) {
    const int64_t d = order[i];
    if (t.size(d) != 1 && t.stride(d) != expected) return false;
    expected *= t.size(d);
  }
  return true;
}

std::vector<int64_t> memory_order(TensorRef t) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) > 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  return order;
}

std::vector<int64_t> dim_order_of(TensorRef t) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (t.size(d) <= 1) order.push_back(d);  // an empty tensor's too: every dimension has its place
  const std::vector<int64_t> moving = memory_order(t);
  order.insert(order.end(), moving.begin(), moving.end());
  return order;
}

bool check_broadcast(KernelContext& ctx, const char* op, TensorRef self, TensorRef other, TensorRef out,
                     int64_t max_rank, bool same_dim_order) {
  const char* names[] = {"self", "other", "out"};
  const TensorRef tensors[] = {self, other, out};
  if (out.dim() > max_rank) return fail(ctx, op, "out has {} dimensions, at most {} are supported", out.dim(), max_rank);
  const std::vector<int64_t> order = dim_order_of(out);
  for (int i = 0; i < 3; ++i) {
    if (!check_dtype(ctx, op, names[i], tensors[i], DType::Int8)) return false;
    if (tensors[i].numel() <= 0) return fail(ctx, op, "{} is empty ({})", names[i], shape_string(tensors[i]));
    if (tensors[i].dim() != out.dim())
      return fail(ctx, op, "{} has {} dimensions, out {}: they must have the same rank", names[i], tensors[i].dim(),
                  out.dim());
    if (!kernels::detail::is_dense(tensors[i]) || (same_dim_order && !has_dim_order(tensors[i], order.data())))
      return fail(ctx, op, "{} has strides {}, not a dense layout of sizes {}{}", names[i],
                  kernels::detail::list_string(tensors[i].strides(), tensors[i].dim()), shape_string(tensors[i]),
                  same_dim_order ? " in out's dim order" : "");
  }
  for (int64_t d = 0; d < out.dim(); ++d) {
    const int64_t a = self.size(d), b = other.size(d);
    if ((a != b && a != 1 && b != 1) || out.size(d) != std::max(a, b))
      return fail(ctx, op, "self {} and other {} do not broadcast to out {} (dimension {})", shape_string(self),
                  shape_string(other), shape_string(out), d);
  }
  return true;
}

bool check_channels_last(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  static constexpr int64_t kChannelsLast[] = {0, 2, 3, 1};
  if (t.dim() == 4 && has_dim_order(t, kChannelsLast)) return true;
  return fail(ctx, op, "{} ({}) must be channels-last in memory (dim_order [0, 2, 3, 1]), got strides {}", name,
              shape_string(t), kernels::detail::list_string(t.strides(), t.dim()));
}

bool check_elementwise(KernelContext& ctx, const char* op, std::initializer_list<const char*> names,
                       std::initializer_list<TensorRef> tensors) {
  const char* const* name = names.begin();
  const TensorRef first = *tensors.begin();
  for (const TensorRef& t : tensors) {
    if (!check_dtype(ctx, op, *name, t, DType::Int8)) return false;
    if (t.numel() <= 0) return fail(ctx, op, "{} is empty ({})", *name, shape_string(t));
    if (!first.same_shape(t))
      return fail(ctx, op, "{} has sizes {}, but {} has {} (no broadcasting)", *name, shape_string(t), *names.begin(),
                  shape_string(first));
    for (int64_t d = 0; d < first.dim(); ++d)
      if (first.size(d) > 1 && first.stride(d) != t.stride(d))
        return fail(ctx, op, "{} has strides {}, but {} has {}: they must share one memory layout", *name,
                    kernels::detail::list_string(t.strides(), t.dim()), *names.begin(),
                    kernels::detail::list_string(first.strides(), first.dim()));
    ++name;
  }
  if (!kernels::detail::is_dense(first))
    return fail(ctx, op, "{} has strides {}, not a dense layout of sizes {}", *names.begin(),
                kernels::detail::list_string(first.strides(), first.dim()), shape_string(first));
  return true;
}

bool check_row_major(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  static constexpr int64_t kRowMajor[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  if (t.dim() <= ET_OPS_MAX_DIMS && has_dim_order(t, kRowMajor)) return true;
  return fail(ctx, op, "{} ({}) must be contiguous (row-major), got strides {}", name, shape_string(t),
              kernels::detail::list_string(t.strides(), t.dim()));
}

bool check_constant(KernelContext& ctx, const char* op, const char* name, TensorRef t) {
  if (t.data() != nullptr) return check_tensor(ctx, op, name, t);
  return fail(ctx, op, "{} must be a constant of the program (its values are packed when the program loads)", name);
}

bool check_output_sizes(KernelContext& ctx, const char* op, TensorRef out, const int64_t* sizes, int64_t rank) {
  bool same = out.dim() == rank;
  for (int64_t d = 0; same && d < rank; ++d) same = out.size(d) == sizes[d];
  if (same) return true;
  return fail(ctx, op, "out has sizes {}, expected {}", shape_string(out), kernels::detail::list_string(sizes, rank));
}

}  // namespace et_ops::kernels::xnnpack::detail
