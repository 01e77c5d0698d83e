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
  if (parts.empty()) return "identical: same schema and fingerprint";
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

std::string describe_origin(const Origin& origin) {
  return fmt::format("component {} {}, library {}", origin.component, origin.version, origin.library_path);
}

std::string fatal_duplicate_message(const Collision& c, const PolicyChoice& policy) {
  const Record& first = *c.registered;
  const Record& second = *c.incoming;
  const bool same_fingerprint = first.fingerprint() == second.fingerprint();
  const bool same_schema = first.same_schema(second);
  // Identical copies are harmless under first-wins; different ones are not,
  // so the verdict and what first-wins would do depend on it.
  const std::string verdict =
      same_fingerprint && same_schema
          ? "Two identical copies of the same kernel (same schema and fingerprint, in two libraries)"
          : fmt::format("Two different copies of the same kernel (their {} differ)",
                        !same_fingerprint && !same_schema ? "fingerprints and schemas"
                        : !same_fingerprint               ? "fingerprints"
                                                          : "schemas");
  const char* first_wins = same_fingerprint && same_schema
                               ? "which keeps the first copy and deduplicates identical ones"
                               : "which keeps the first copy and rejects this one with an error the application "
                                 "can handle instead of aborting";
  return fmt::format(
      "Re-registering {}\n"
      "  kernel key:             {}\n"
      "  already registered by:  {}\n"
      "  registered again by:    {}\n"
      "  the two copies:         {}\n"
      "{} are in this process, and the duplicate policy is 'fatal' (chosen by {}), which stops at any second "
      "copy. Ways out:\n"
      "  1. link only one copy of this kernel library into the process (build every plugin against the shared "
      "kernel library instead of compiling the kernels into it); or\n"
      "  2. choose the first-wins policy, {}, in any of these ways:\n"
      "       environment:   {}=first-wins\n"
      "       command line:  et-ops run --policy first-wins ...\n"
      "       Python:        et_ops.set_duplicate_policy(\"first-wins\")\n"
      "       C++:           et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins);\n"
      "       build default: meson setup -Dduplicate_policy=first-wins\n",
      first.op(), key_name(first), describe_origin(first.batch().origin()), describe_origin(second.batch().origin()),
      differences(first, second), verdict, policy.source, first_wins, kDuplicatePolicyVariable);
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
