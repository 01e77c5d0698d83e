// Reading the argument list of a schema such as
// "ns::op.out(Tensor self, int[2] pad=[0, 0], *, Tensor(a!) out) -> Tensor(a!)".
#include "runtime/written_arguments.h"

namespace et_ops::runtime {
namespace {

// The text between the '(' after the operator name and its matching ')'.
std::string_view argument_list(std::string_view schema) {
  const std::size_t open = schema.find('(');
  if (open == std::string_view::npos) return {};
  int depth = 0;
  for (std::size_t i = open; i < schema.size(); ++i) {
    if (schema[i] == '(' || schema[i] == '[') ++depth;
    else if ((schema[i] == ')' || schema[i] == ']') && --depth == 0) return schema.substr(open + 1, i - open - 1);
  }
  return {};
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  return text;
}

// Whether one argument ("Tensor(a!) out", "int[2] pad=[0, 0]") is written:
// its type, the text before the first space, has an annotation with '!'.
bool is_written(std::string_view argument) {
  const std::string_view type = argument.substr(0, argument.find(' '));
  return type.find("!)") != std::string_view::npos;
}

}  // namespace

std::vector<bool> written_arguments(std::string_view schema) {
  const std::string_view list = argument_list(schema);
  std::vector<bool> written;
  if (trimmed(list).empty()) return written;
  int depth = 0;  // commas inside brackets (default lists) do not separate arguments
  std::size_t start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && (list[i] == '(' || list[i] == '[')) ++depth;
    else if (i < list.size() && (list[i] == ')' || list[i] == ']')) --depth;
    else if (i == list.size() || (list[i] == ',' && depth == 0)) {
      const std::string_view argument = trimmed(list.substr(start, i - start));
      if (argument == "...") return {};  // variadic: positions do not map to arguments
      if (!argument.empty() && argument != "*") written.push_back(is_written(argument));
      start = i + 1;
    }
  }
  return written;
}

}  // namespace et_ops::runtime
