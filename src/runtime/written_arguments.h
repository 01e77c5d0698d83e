// Which arguments of an operator its kernel writes, read from the schema
// string that the kernel was registered with: the ones whose type carries
// a mutable alias annotation, as in "Tensor(a!) out".
#ifndef ET_OPS_SRC_RUNTIME_WRITTEN_ARGUMENTS_H
#define ET_OPS_SRC_RUNTIME_WRITTEN_ARGUMENTS_H

#include <string_view>
#include <vector>

namespace et_ops::runtime {

// One flag per argument, in schema order (the keyword-only marker '*' is
// not an argument). Empty when the schema has no argument list to read, or
// a variadic one ("...").
std::vector<bool> written_arguments(std::string_view schema);

}  // namespace et_ops::runtime

#endif  // ET_OPS_SRC_RUNTIME_WRITTEN_ARGUMENTS_H
