// The usage and help texts of et-ops, written from the command table.
#ifndef ET_OPS_TOOLS_HELP_H
#define ET_OPS_TOOLS_HELP_H

#include <string>

#include "args.h"

namespace et_ops::tool {

// "usage: et-ops COMMAND [ARGS]" and one line per command.
std::string global_usage();
// "usage: et-ops run PROGRAM.etp [--input FILE.npy]... ..."
std::string command_usage(const CommandSpec& spec);
// The usage, what the command does, and every option with its help.
std::string command_help(const CommandSpec& spec);
// "et-ops 0.1.0"
std::string version_text();

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_HELP_H
