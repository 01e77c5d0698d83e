#include "registry/messages.h"

#include <fmt/format.h>

namespace et_ops::detail {
namespace {

std::string key_name(const Record& r) { return r.is_fallback() ? "fallback" : std::string(r.key_text()); }

std::string differences(const Record& registered, const Record& incoming) {
  std::vector<std::string> parts;
  if (registered.fingerprint() != incoming.fingerprint())
    parts.push_back(fmt::format("fingerprint {} vs {}", registered.fingerprint(), incoming.fingerprint()));
  if (!registered.same_schema(incoming))
    parts.push_back(fmt::format("schema '{}' vs '{}'", registered.schema(), incoming.schema()));
  if (parts.empty()) return "identical schema and fingerprint";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string describe_origin(const Origin& origin) {
  return fmt::format("component {} {}, library {}", origin.component, origin.version, origin.library_path);
}

std::string fatal_duplicate_message(const Collision& c, const PolicyChoice& policy) {
  const Record& first = *c.registered;
  const Record& second = *c.incoming;
  return fmt::format(
      "Re-registering {}\n"
      "  kernel key:             {}\n"
      "  already registered by:  {}\n"
      "  registered again by:    {}\n"
      "  the two copies:         {}\n"
      "Two different copies of the same kernel are in this process, and the duplicate policy is 'fatal' "
      "(chosen by {}). Two ways out:\n"
      "  1. link only one copy of this kernel library into the process; or\n"
      "  2. choose the first-wins policy (et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins), "
      "{}=first-wins, or the Meson option duplicate_policy=first-wins): identical copies are then "
      "deduplicated and different copies are rejected with an error.\n",
      first.op(), key_name(first), describe_origin(first.batch().origin()), describe_origin(second.batch().origin()),
      differences(first, second), policy.source, kDuplicatePolicyVariable);
}

std::string conflict_message(const Origin& incoming, const std::vector<Collision>& conflicts) {
  std::string text = fmt::format(
      "Rejected the kernels of {}: {} operator(s) conflict with different copies already registered "
      "(policy first-wins). Nothing of this batch was registered; the registry is unchanged.\n",
      describe_origin(incoming), conflicts.size());
  for (const Collision& c : conflicts) {
    text += fmt::format("  {} [key {}]: {}\n    registered: {}\n    rejected:   {}\n", c.incoming->op(),
                        key_name(*c.incoming), differences(*c.registered, *c.incoming),
                        describe_origin(c.registered->batch().origin()), describe_origin(c.incoming->batch().origin()));
  }
  text += "first-wins accepts only identical copies (same schema and fingerprint). Link one copy of the kernel "
          "library, or build every copy from the same sources.\n";
  return text;
}

}  // namespace et_ops::detail
