// Choosing the duplicate policy: explicit call > ET_OPS_DUPLICATE_POLICY >
// build default, and an invalid environment value is an error.
#include <cstdlib>

#include <catch2/catch.hpp>

#include "et_ops/registry.h"

namespace {

struct Environment {
  explicit Environment(const char* value) {
    if (value) setenv("ET_OPS_DUPLICATE_POLICY", value, 1);
    else unsetenv("ET_OPS_DUPLICATE_POLICY");
  }
  ~Environment() {
    unsetenv("ET_OPS_DUPLICATE_POLICY");
    et_ops::clear_duplicate_policy();
  }
};

void noop(et_ops_kernel_context*, et_ops_value* const*, std::size_t) {}

}  // namespace

TEST_CASE("policy names parse and print", "[policy]") {
  CHECK(*et_ops::parse_duplicate_policy("fatal") == et_ops::DuplicatePolicy::Fatal);
  CHECK(*et_ops::parse_duplicate_policy("first-wins") == et_ops::DuplicatePolicy::FirstWins);
  CHECK_FALSE(et_ops::parse_duplicate_policy("First-Wins").ok());
  CHECK(et_ops::parse_duplicate_policy("").status().code() == et_ops::StatusCode::Invalid);
  CHECK(et_ops::parse_duplicate_policy("x").status().message() == "unknown policy 'x' (valid: fatal, first-wins)");
  CHECK(et_ops::duplicate_policy_name(et_ops::DuplicatePolicy::FirstWins) == "first-wins");
}

TEST_CASE("without a choice the build default applies", "[policy]") {
  Environment env(nullptr);
  auto choice = et_ops::effective_duplicate_policy();
  CHECK(choice.ok());
  CHECK(choice->source == "build default");
  CHECK(et_ops::duplicate_policy_name(choice->policy) == BUILD_DEFAULT_POLICY);
}

TEST_CASE("the environment variable beats the default; the API call beats both", "[policy]") {
  Environment env("first-wins");
  auto from_env = et_ops::effective_duplicate_policy();
  CHECK(from_env->policy == et_ops::DuplicatePolicy::FirstWins);
  CHECK(from_env->source == "ET_OPS_DUPLICATE_POLICY");
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::Fatal);
  auto explicit_choice = et_ops::effective_duplicate_policy();
  CHECK(explicit_choice->policy == et_ops::DuplicatePolicy::Fatal);
  CHECK(explicit_choice->source == "set_duplicate_policy()");
  et_ops::clear_duplicate_policy();
  CHECK(et_ops::effective_duplicate_policy()->policy == et_ops::DuplicatePolicy::FirstWins);
}

TEST_CASE("an invalid environment value is an error naming the variable and the valid values", "[policy]") {
  Environment env("first_wins");
  auto choice = et_ops::effective_duplicate_policy();
  REQUIRE_FALSE(choice.ok());
  CHECK(choice.status().message().find("ET_OPS_DUPLICATE_POLICY") != std::string::npos);
  CHECK(choice.status().message().find("'first_wins'") != std::string::npos);
  CHECK(choice.status().message().find("'fatal'") != std::string::npos);
  CHECK(choice.status().message().find("'first-wins'") != std::string::npos);

  // Registration refuses to guess.
  et_ops_kernel_record record{"policy::noop.out", "", &noop, "s", "f"};
  et_ops_manifest m{ET_OPS_ABI_VERSION, sizeof record, "policy_test", "1", &record, 1};
  auto result = et_ops::register_manifest(m);
  CHECK(result.status().code() == et_ops::StatusCode::Policy);
  CHECK(result.status().message().find("ET_OPS_DUPLICATE_POLICY") != std::string::npos);
  CHECK_FALSE(et_ops::has_operator("policy::noop.out"));

  // An explicit choice does not need the environment.
  et_ops::set_duplicate_policy(et_ops::DuplicatePolicy::FirstWins);
  CHECK(et_ops::register_manifest(m).ok());
  CHECK(et_ops::unregister_library("/proc/self/exe") == 1);
}
