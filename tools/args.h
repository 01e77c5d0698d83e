// What each et-ops command accepts (its operands and options, with their
// help text and how a shell completes them) and the parser that reads a
// command line against it. One description serves parsing, `--help` and the
// bash completion script.
#ifndef ET_OPS_TOOLS_ARGS_H
#define ET_OPS_TOOLS_ARGS_H

#include <cstddef>
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

// How a shell completes an operand or an option's value.
struct Completion {
  enum class Kind { Nothing, Files, Directories, Words, WordList };
  Kind kind = Kind::Nothing;
  std::string pattern;             // Files: a glob such as "*.npy" (empty: any file)
  std::vector<std::string> words;  // Words; WordList: comma-separated words

  static Completion files(std::string glob) { return {Kind::Files, std::move(glob), {}}; }
  static Completion directories() { return {Kind::Directories, {}, {}}; }
  static Completion one_of(std::vector<std::string> words) { return {Kind::Words, {}, std::move(words)}; }
  static Completion list_of(std::vector<std::string> words) { return {Kind::WordList, {}, std::move(words)}; }
};

struct OptionSpec {
  std::string name;   // "--input"
  std::string value;  // what it takes, "FILE.npy"; empty for a flag
  std::string help;
  bool repeatable = false;
  Completion completion;
  bool is_flag() const { return value.empty(); }
};

struct CommandSpec {
  std::string name;      // "run"
  std::string operands;  // "PROGRAM.etp", "[LIBRARY...]"
  std::string summary;   // one line
  std::string details;   // more lines for --help (may be empty)
  std::size_t min_positional = 0;
  std::size_t max_positional = 0;
  Completion operand_completion;
  std::vector<OptionSpec> options;

  const OptionSpec* option(const std::string& name) const;
};

// What a command takes besides options.
struct Operands {
  std::string synopsis;  // "PROGRAM.etp", "[LIBRARY...]"; empty: none
  std::size_t min = 0;
  std::size_t max = 0;
  Completion completion;

  // The one program file most commands take.
  static Operands program() { return {"PROGRAM.etp", 1, 1, Completion::files("*.etp")}; }
};

CommandSpec command_spec(std::string name, std::string summary, std::string details, Operands operands,
                         std::vector<OptionSpec> options);

class Arguments {
 public:
  // Throws UsageError on an unknown option, a missing value or a wrong
  // number of positional arguments.
  Arguments(const std::vector<std::string>& args, const CommandSpec& spec);

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

// A count option (--repeat, --threads, ...): `absent` when it is not given,
// else a number from `min` to `max`; a UsageError naming `what` otherwise.
long parse_count(const Arguments& args, const std::string& option, long max, const char* what, long absent = 1,
                 long min = 1);

// True when the arguments ask for help (-h or --help before any "--").
bool asks_for_help(const std::vector<std::string>& args);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_ARGS_H
