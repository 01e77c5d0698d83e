// The et-ops subcommands. Each takes the arguments after its name and
// returns the exit status; a UsageError escapes to main (status 2).
#ifndef ET_OPS_TOOLS_COMMANDS_H
#define ET_OPS_TOOLS_COMMANDS_H

#include <string>
#include <vector>

namespace et_ops::tool {

int run_command(const std::vector<std::string>& args);
int ops_command(const std::vector<std::string>& args);
int check_command(const std::vector<std::string>& args);
int doctor_command(const std::vector<std::string>& args);

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_COMMANDS_H
