// et-ops completion bash
// Prints the bash completion script, written from the command table so it
// offers exactly the commands, options and values that et-ops accepts. The
// build installs its output as <datadir>/bash-completion/completions/et-ops.
#include <fmt/format.h>

#include <string>

#include "commands.h"
#include "et_ops/version.h"
#include "exit_codes.h"

namespace et_ops::tool {
namespace {

// Shared helpers of the script: each fills COMPREPLY from $cur.
constexpr const char* kHelpers = R"(_et_ops_words() {  # one of the words in $1
  COMPREPLY=($(compgen -W "$1" -- "$cur"))
}
_et_ops_list() {  # a comma-separated list of the words in $1: completes the part after the last comma
  local prefix= last=$cur
  if [[ $cur == *,* ]]; then prefix=${cur%,*},; last=${cur##*,}; fi
  COMPREPLY=($(compgen -W "$1" -P "$prefix" -- "$last"))
  compopt -o nospace 2>/dev/null || true
}
_et_ops_files() {  # files matching the glob $1, and directories to descend into
  local IFS=$'\n'
  COMPREPLY=($(compgen -d -- "$cur") $(compgen -f -X "!$1" -- "$cur"))
  compopt -o filenames 2>/dev/null || true
}
_et_ops_directories() {
  local IFS=$'\n'
  COMPREPLY=($(compgen -d -- "$cur"))
  compopt -o filenames 2>/dev/null || true
}
)";

std::string quoted(const std::string& text) { return "'" + text + "'"; }

std::string words_of(const std::vector<std::string>& words) { return quoted(fmt::format("{}", fmt::join(words, " "))); }

// The helper call that completes `c`, or "" when nothing is offered.
std::string completion_call(const Completion& c) {
  switch (c.kind) {
    case Completion::Kind::Files: return "_et_ops_files " + quoted(c.pattern.empty() ? "*" : c.pattern);
    case Completion::Kind::Directories: return "_et_ops_directories";
    case Completion::Kind::Words: return "_et_ops_words " + words_of(c.words);
    case Completion::Kind::WordList: return "_et_ops_list " + words_of(c.words);
    case Completion::Kind::Nothing: break;
  }
  return "";
}

std::string command_case(const CommandSpec& spec) {
  std::string text = fmt::format("    {})\n      case $prev in\n", spec.name);
  std::vector<std::string> names;
  for (const OptionSpec& o : spec.options) {
    names.push_back(o.name);
    if (o.is_flag()) continue;
    // An option's value: offer what it takes, or nothing (a number, say).
    const std::string call = completion_call(o.completion);
    text += fmt::format("        {}) {}return ;;\n", o.name, call.empty() ? "" : call + "; ");
  }
  names.push_back("--help");
  text += "      esac\n";
  text += fmt::format("      if [[ $cur == -* ]]; then _et_ops_words {}; return; fi\n", words_of(names));
  if (const std::string call = completion_call(spec.operand_completion); !call.empty())
    text += fmt::format("      {}\n", call);
  return text + "      ;;\n";
}

std::string bash_script() {
  std::vector<std::string> names;
  for (const Command& c : commands()) names.push_back(c.spec.name);
  std::vector<std::string> first_words = names;
  first_words.insert(first_words.end(), {"help", "--help", "--version"});

  std::string script = fmt::format(
      "# bash completion for et-ops {}, written by 'et-ops completion bash'.\n"
      "# Load it with 'source FILE' (or put it in a bash-completion completions directory).\n",
      ET_OPS_VERSION);
  script += kHelpers;
  script +=
      "_et_ops() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} prev= command= i\n"
      "  (( COMP_CWORD > 0 )) && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
      "  # --option=value: bash splits it at '='.\n"
      "  if [[ $cur == = ]]; then cur=; elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then "
      "prev=${COMP_WORDS[COMP_CWORD-2]}; fi\n"
      "  for (( i = 1; i < COMP_CWORD; i++ )); do\n"
      "    if [[ ${COMP_WORDS[i]} != -* ]]; then command=${COMP_WORDS[i]}; break; fi\n"
      "  done\n"
      "  COMPREPLY=()\n"
      "  case $command in\n";
  script += fmt::format("    '') _et_ops_words {} ;;\n", words_of(first_words));
  script += fmt::format("    help) _et_ops_words {} ;;\n", words_of(names));
  for (const Command& c : commands()) script += command_case(c.spec);
  script +=
      "  esac\n"
      "}\n"
      "complete -F _et_ops et-ops\n";
  return script;
}

}  // namespace

CommandSpec completion_spec() {
  return command_spec("completion", "print the bash completion script of et-ops",
      "Installed with et-ops as <datadir>/bash-completion/completions/et-ops; for a prefix that bash-completion\n"
      "does not search, load it with: source <(et-ops completion bash)\n",
      {"bash", 1, 1, Completion::one_of({"bash"})}, {});
}

int completion_command(const Arguments& args) {
  if (args.positional()[0] != "bash")
    throw UsageError(fmt::format("unknown shell '{}' (known: bash)", args.positional()[0]));
  fmt::print("{}", bash_script());
  return kExitOk;
}

}  // namespace et_ops::tool
