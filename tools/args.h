// A small command-line parser: positional arguments, flags (--json) and
// options with values (--input FILE or --input=FILE, repeatable).
#ifndef ET_OPS_TOOLS_ARGS_H
#define ET_OPS_TOOLS_ARGS_H

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace et_ops::tool {

// A mistake in the command line (exit status 2).
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct ArgumentSpec {
  std::set<std::string> flags;    // "--json"
  std::set<std::string> options;  // "--input"; each takes a value
  std::size_t min_positional = 0;
  std::size_t max_positional = 0;
};

class Arguments {
 public:
  // Throws UsageError on an unknown option, a missing value or a wrong
  // number of positional arguments.
  Arguments(const std::vector<std::string>& args, const ArgumentSpec& spec);

  const std::vector<std::string>& positional() const { return positional_; }
  bool flag(const std::string& name) const { return flags_.count(name) != 0; }
  // Every value given for `name`, in order.
  std::vector<std::string> values(const std::string& name) const;
  // The value of an option that may be given at most once.
  std::optional<std::string> value(const std::string& name) const;

 private:
  std::vector<std::string> positional_;
  std::set<std::string> flags_;
  std::map<std::string, std::vector<std::string>> values_;
};

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_ARGS_H
