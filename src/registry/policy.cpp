// Choosing the duplicate policy: explicit call, then the environment
// variable, then the build's default.
#include <fmt/format.h>

#include <atomic>
#include <cstdlib>

#include "et_ops/registry.h"

#ifndef ET_OPS_DEFAULT_DUPLICATE_POLICY
#error "the build defines ET_OPS_DEFAULT_DUPLICATE_POLICY from the Meson option duplicate_policy"
#endif

namespace et_ops {
namespace {

// -1: no explicit choice; otherwise a DuplicatePolicy value.
std::atomic<int> explicit_policy{-1};

DuplicatePolicy build_default() {
  static const DuplicatePolicy policy = *parse_duplicate_policy(ET_OPS_DEFAULT_DUPLICATE_POLICY);
  return policy;
}

}  // namespace

void set_duplicate_policy(DuplicatePolicy policy) { explicit_policy.store(static_cast<int>(policy)); }

void clear_duplicate_policy() { explicit_policy.store(-1); }

Result<PolicyChoice> effective_duplicate_policy() {
  PolicyChoice choice;
  int chosen = explicit_policy.load();
  if (chosen >= 0) {
    choice.policy = static_cast<DuplicatePolicy>(chosen);
    choice.source = "set_duplicate_policy()";
    return choice;
  }
  const char* value = std::getenv(kDuplicatePolicyVariable);
  if (value != nullptr && *value != '\0') {  // set but empty counts as unset
    if (auto parsed = parse_duplicate_policy(value)) {
      choice.policy = *parsed;
      choice.source = kDuplicatePolicyVariable;
      return choice;
    }
    return Status(StatusCode::Policy, fmt::format("invalid value '{}' in the environment variable {}; valid values are 'fatal' and "
                               "'first-wins' (or unset it to use the build default '{}')",
                               value, kDuplicatePolicyVariable, duplicate_policy_name(build_default())));
  }
  choice.policy = build_default();
  choice.source = "build default";
  return choice;
}

}  // namespace et_ops
