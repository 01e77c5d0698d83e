// The missing-operator report: all missing operators at once, the component
// of each, and the lines that add it.
#include <fmt/format.h>

#include <algorithm>

#include "et_ops/diagnostics.h"
#include "et_ops/registry.h"

namespace et_ops {

std::string how_to_add(const ComponentInfo& c) {
  return fmt::format(
      "  pkg-config: pkg-config --cflags --libs {0}\n"
      "  Meson:      dependency('{0}')\n"
      "  CMake:      find_package(et_ops REQUIRED COMPONENTS {1})\n"
      "              target_link_libraries(your_app PRIVATE {2})\n"
      "  C++:        #include <{3}>\n"
      "              {4}();  // once at start-up, before loading programs\n",
      c.pkg_config, c.name, c.cmake_target, c.header, c.register_function);
}

namespace {

std::vector<std::string> unique_missing(const std::vector<std::string>& operators) {
  std::vector<std::string> missing;
  for (const std::string& op : operators)
    if (!has_operator(op) && std::find(missing.begin(), missing.end(), op) == missing.end()) missing.push_back(op);
  return missing;
}

// Whether some kernel of `component` is registered: then an operator of
// its table that is not was left out of this build of it (a selective build).
bool component_registered(const ComponentInfo& component) {
  for (const RecordInfo& record : registered_records())
    if (record.origin.component == component.name) return true;
  return false;
}

std::string report_text(const std::vector<MissingOperator>& missing, std::string_view program) {
  std::string text = fmt::format("{} needs {} operator(s) that are not registered in this process:\n",
                                 program.empty() ? "The program" : fmt::format("Program '{}'", program),
                                 missing.size());
  std::vector<const ComponentInfo*> components;
  bool unknown = false;
  bool left_out = false;
  for (const MissingOperator& m : missing) {
    if (m.component && component_registered(*m.component)) {
      text += fmt::format("  {}  (left out of this build of component {}, {}: a selective build)\n", m.op,
                          m.component->name, m.component->library);
      left_out = true;
    } else if (m.component) {
      text += fmt::format("  {}  (provided by component {}, {})\n", m.op, m.component->name, m.component->library);
      if (std::find(components.begin(), components.end(), m.component) == components.end())
        components.push_back(m.component);
    } else {
      text += fmt::format("  {}  (not provided by any et_ops component)\n", m.op);
      unknown = true;
    }
  }
  if (left_out)
    text += "The kernel libraries of this build keep only a selection of operators. To add an operator left out, "
            "add its name to the file of -Dselected_operators (or the program to -Dselected_programs), run "
            "meson setup --reconfigure and rebuild; et-ops doctor --list PROGRAM.etp prints the operators a "
            "program needs.\n";
  if (left_out && components.empty() && !unknown) return text;
  text += "This is a packaging problem, not a problem with the model: the kernel library that provides these "
          "operators is not linked into the application, or its register_kernels() was not called.\n";
  for (const ComponentInfo* c : components) text += fmt::format("To add {}:\n{}", c->name, how_to_add(*c));
  if (unknown)
    text += "Operators that no et_ops component provides need a kernel library from elsewhere: load it with "
            "et-ops --load-library PATH or et_ops.load_library(PATH).\n";
  return text;
}

}  // namespace

MissingOperatorReport diagnose_missing_operators(const std::vector<std::string>& operators, std::string_view program) {
  MissingOperatorReport report;
  for (std::string& op : unique_missing(operators)) {
    const ComponentInfo* component = component_providing(op);
    report.missing.push_back(MissingOperator{std::move(op), component});
  }
  if (!report.missing.empty()) report.message = report_text(report.missing, program);
  return report;
}

}  // namespace et_ops
