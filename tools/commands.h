// The et-ops commands: each one's description (operands, options, help)
// and the function that runs it. The table drives dispatch, the usage and
// help texts, and the bash completion script.
#ifndef ET_OPS_TOOLS_COMMANDS_H
#define ET_OPS_TOOLS_COMMANDS_H

#include <vector>

#include "args.h"

namespace et_ops::tool {

struct Command {
  CommandSpec spec;
  // Returns the exit status; a UsageError escapes to main (status 2).
  int (*run)(const Arguments& args);
};

// Every command, in the order the usage lists them.
const std::vector<Command>& commands();
const Command* find_command(const std::string& name);

CommandSpec run_spec();
int run_command(const Arguments& args);
CommandSpec generate_spec();
int generate_command(const Arguments& args);
CommandSpec inspect_spec();
int inspect_command(const Arguments& args);
CommandSpec doctor_spec();
int doctor_command(const Arguments& args);
CommandSpec ops_spec();
int ops_command(const Arguments& args);
CommandSpec check_spec();
int check_command(const Arguments& args);
CommandSpec completion_spec();
int completion_command(const Arguments& args);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_COMMANDS_H
