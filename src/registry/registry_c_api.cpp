// The C ABI of the registry (et_ops/abi.h) over the C++ implementation.
#include <cstdlib>
#include <cstring>

#include "et_ops/registry.h"

namespace {
char* copy_message(const std::string& text) {
  if (text.empty()) return nullptr;
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out != nullptr) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}
}  // namespace

extern "C" {

et_ops_registration_result et_ops_register_manifest(const et_ops_manifest* manifest) {
  if (manifest == nullptr)
    return et_ops_registration_result{ET_OPS_ERROR_INVALID, 0, 0, 0, copy_message("null kernel manifest")};
  et_ops::RegistrationResult r = et_ops::register_manifest(*manifest);
  if (!r) return et_ops_registration_result{static_cast<int32_t>(r.status().code()), 0, 0, 0,
                                           copy_message(r.status().message())};
  return et_ops_registration_result{ET_OPS_OK, r->registered, r->deduplicated, r->unchanged, nullptr};
}

size_t et_ops_unregister_library(const char* library_path) {
  return library_path ? et_ops::unregister_library(library_path) : 0;
}

et_ops_kernel_fn et_ops_lookup_fallback(const char* op) { return op ? et_ops::lookup(op) : nullptr; }

void et_ops_string_free(char* message) { std::free(message); }

}  // extern "C"
