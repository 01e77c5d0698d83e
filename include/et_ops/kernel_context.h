// KernelContext: how a kernel reports an error without aborting.
#ifndef ET_OPS_KERNEL_CONTEXT_H
#define ET_OPS_KERNEL_CONTEXT_H

#include <cstddef>
#include <cstring>
#include <string_view>

#include "et_ops/abi.h"
#include "et_ops/status.h"

namespace et_ops {

// Layout-compatible with et_ops_kernel_context, so a KernelContext can be
// handed to a C-ABI kernel and a C-ABI context can be viewed as one.
class KernelContext {
 public:
  KernelContext() {
    raw_.struct_size = sizeof(et_ops_kernel_context);
    raw_.failed = 0;
    raw_.message[0] = '\0';
    raw_.environment = nullptr;
  }

  static KernelContext& from(et_ops_kernel_context* raw) { return *reinterpret_cast<KernelContext*>(raw); }

  bool ok() const { return raw_.failed == 0; }
  explicit operator bool() const { return ok(); }
  std::string_view message() const { return raw_.message; }
  // The failure as callers see it: KernelFailed with the message, or ok.
  Status status() const { return ok() ? Status() : Status(StatusCode::KernelFailed, std::string(message())); }

  // Records the first failure; later failures keep the first message.
  void fail(std::string_view message) {
    if (raw_.failed) return;
    raw_.failed = 1;
    std::size_t n = message.size() < ET_OPS_MESSAGE_CAPACITY - 1 ? message.size() : ET_OPS_MESSAGE_CAPACITY - 1;
    std::memcpy(raw_.message, message.data(), n);
    raw_.message[n] = '\0';
  }

  void reset() {
    raw_.failed = 0;
    raw_.message[0] = '\0';
  }

  // The running run state's environment (its thread pool), for a plain
  // kernel that splits its work; null outside a run state's run, or from a
  // runtime whose contexts end before it.
  const et_ops_run_environment* run_environment() const {
    return raw_.struct_size >= offsetof(et_ops_kernel_context, environment) + sizeof(raw_.environment)
               ? raw_.environment
               : nullptr;
  }
  // What run_environment() gives (a runtime sets it for its runs).
  void set_run_environment(const et_ops_run_environment* environment) { raw_.environment = environment; }

  et_ops_kernel_context* raw() { return &raw_; }

 private:
  et_ops_kernel_context raw_;
};

static_assert(sizeof(KernelContext) == sizeof(et_ops_kernel_context), "KernelContext must wrap the C struct exactly");

}  // namespace et_ops

#endif  // ET_OPS_KERNEL_CONTEXT_H
