// et-ops exit status (DESIGN.md "Command line: et-ops").
#ifndef ET_OPS_TOOLS_EXIT_CODES_H
#define ET_OPS_TOOLS_EXIT_CODES_H

namespace et_ops::tool {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the program, its inputs, a library: something named is wrong
inline constexpr int kExitUsage = 2;    // the command line itself is wrong

}  // namespace et_ops::tool

#endif  // ET_OPS_TOOLS_EXIT_CODES_H
