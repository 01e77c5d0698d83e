// The table of et-ops commands.
#include "commands.h"

namespace et_ops::tool {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {run_spec(), &run_command},         {generate_spec(), &generate_command},
      {inspect_spec(), &inspect_command}, {doctor_spec(), &doctor_command},
      {ops_spec(), &ops_command},         {check_spec(), &check_command},
      {completion_spec(), &completion_command},
  };
  return table;
}

const Command* find_command(const std::string& name) {
  for (const Command& command : commands())
    if (command.spec.name == name) return &command;
  return nullptr;
}

}  // namespace et_ops::tool
