// A C++ application that links libet_ops and libet_kernels_quantized.so,
// registers them, and embeds CPython, which imports a plugin extension
// carrying its own copy of the quantized kernels. Both copies register into
// the one registry of the process.
//
//   host --plugin NAME|none --order host-first|plugin-first
//        [--python-policy P] [--program PROGRAM.etp --input INPUT.npy]
//        [--with-et-ops-module] [--python-side] [--print-libraries]
//
// The plugin is the Python module et_ops_plugin_NAME (identical and
// modified in the build tree; the wheel's test installs a vendored one).
// It prints what happens, line by line ("host: ...", "plugin: ...",
// "registry: ...", "program: ...", "loaded: ..."), for test_embedded.py and
// the wheel's test to assert on.
// Exit status: 0 when the host could run to the end, 1 on a failure.
#include <Python.h>
#include <link.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "et_ops/kernels/portable.h"
#include "et_ops/kernels/quantized.h"
#if defined(HOST_REGISTERS_XNNPACK)
#include "et_ops/kernels/xnnpack.h"
#endif
#include "et_ops/npy.h"
#include "et_ops/program.h"
#include "et_ops/registry.h"

namespace {

struct Options {
  std::string plugin = "identical";
  std::string order = "host-first";
  std::string python_policy;
  std::string program;
  std::string input;
  bool with_et_ops_module = false;
  bool python_side = false;  // also run and inspect through the et_ops Python module
  bool print_libraries = false;  // list the et_ops shared objects the process holds at the end
};

bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    if (arg == "--plugin" ? value(o.plugin)
        : arg == "--order" ? value(o.order)
        : arg == "--python-policy" ? value(o.python_policy)
        : arg == "--program" ? value(o.program)
        : arg == "--input" ? value(o.input)
        : arg == "--with-et-ops-module" ? (o.with_et_ops_module = true)
        : arg == "--python-side" ? (o.python_side = true)
        : arg == "--print-libraries" ? (o.print_libraries = true)
        : false)
      continue;
    std::fprintf(stderr, "host: bad argument '%s'\n", arg.c_str());
    return false;
  }
  return !o.plugin.empty() && (o.order == "host-first" || o.order == "plugin-first");
}

bool python(const std::string& code) {
  if (PyRun_SimpleString(code.c_str()) == 0) return true;
  std::printf("python: failed running:\n%s\n", code.c_str());
  return false;
}

// Returns false only when the registry refused to run at all (invalid
// policy); a first-wins conflict is reported and the host carries on.
bool register_host() {
  auto r = et_ops::kernels::quantized::register_kernels();
  const et_ops::Registration counts = r ? *r : et_ops::Registration{};
  std::printf("host: ok=%d registered=%u deduplicated=%u unchanged=%u\n", r.ok(), counts.registered,
              counts.deduplicated, counts.unchanged);
  if (!r.ok()) std::printf("host: message: %s\n", r.status().message().c_str());
  std::fflush(stdout);
  return r.status().code() != et_ops::StatusCode::Policy;
}

bool register_plugin(const std::string& module) {
  if (module == "et_ops_plugin_none") return true;
  bool ok = python("import " + module + " as plugin\n"
                   "r = plugin.register_kernels()\n"
                   "print('plugin: ok=%d registered=%d deduplicated=%d unchanged=%d' % (r['ok'], r['registered'], "
                   "r['deduplicated'], r['unchanged']))\n"
                   "if not r['ok']: print('plugin: message: ' + r['message'])\n");
  std::fflush(stdout);
  return ok;
}

void print_registry() {
  auto c = et_ops::counters();
  std::printf("registry: records=%zu registered=%llu deduplicated=%llu conflicts=%llu\n",
              et_ops::registered_records().size(), static_cast<unsigned long long>(c.registered),
              static_cast<unsigned long long>(c.deduplicated), static_cast<unsigned long long>(c.conflicts));
  std::fflush(stdout);
}

// What the et_ops Python module sees of the registry, to compare with the
// host's line: one registry, so the same records and counters.
bool print_python_registry() {
  return python(
      "import et_ops\n"
      "c = et_ops.counters()\n"
      "print('python registry: records=%d registered=%d deduplicated=%d conflicts=%d' % ("
      "len(et_ops.registered_operators()), c['registered'], c['deduplicated'], c['conflicts']))\n");
}

// Every shared object of the project in this process (libet_*), one line
// each: one registry means exactly one libet_ops.
void print_loaded_libraries() {
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void*) {
        const char* slash = std::strrchr(info->dlpi_name, '/');
        if (slash != nullptr && std::strncmp(slash + 1, "libet_", 6) == 0) std::printf("loaded: %s\n", info->dlpi_name);
        return 0;
      },
      nullptr);
  std::fflush(stdout);
}

// Runs the program from C++; returns its output as .npy bytes (empty on failure).
std::vector<uint8_t> run_in_cpp(const Options& o) {
  auto loaded = et_ops::Program::load(o.program);
  if (!loaded) return std::printf("program: load failed: %s\n", loaded.status().message().c_str()), std::vector<uint8_t>();
  auto input = et_ops::read_npy(o.input);
  if (!input) return std::printf("program: bad input: %s\n", input.status().message().c_str()), std::vector<uint8_t>();
  auto state = loaded.value()->make_state();
  if (!state) return std::printf("program: no run state: %s\n", state.status().message().c_str()), std::vector<uint8_t>();
  if (auto set = state->set_input(0, input->data.data(), input->data.size()); !set)
    return std::printf("program: bad input: %s\n", set.message().c_str()), std::vector<uint8_t>();
  if (auto run = loaded.value()->run(*state); !run)
    return std::printf("program: run failed: %s\n", run.message().c_str()), std::vector<uint8_t>();
  std::printf("program: ran from C++\n");
  return et_ops::encode_npy(state->output(0));
}

// Runs the program through the et_ops Python module in this process and
// prints whether its output is byte-identical to the C++ run.
bool compare_with_python(const Options& o, const std::vector<uint8_t>& cpp_output) {
  const std::string python_npy = o.program + ".python.npy";
  std::fflush(stdout);
  if (!python("import et_ops, numpy\n"
              "out = et_ops.load(r'''" + o.program + "''').run([numpy.load(r'''" + o.input + "''')])[0]\n"
              "numpy.save(r'''" + python_npy + "''', out)\n"))
    return false;
  auto from_python = et_ops::read_npy(python_npy);
  std::remove(python_npy.c_str());
  auto from_cpp = et_ops::parse_npy(cpp_output.data(), cpp_output.size());
  bool identical = from_python.ok() && from_cpp.ok() && from_python->data == from_cpp->data &&
                   from_python->shape == from_cpp->shape && from_python->dtype == from_cpp->dtype;
  std::printf("program: C++ and Python outputs %s\n", identical ? "byte-identical" : "DIFFER");
  return identical;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, o)) return 2;
  bool ok = true;
  if (auto r = et_ops::kernels::portable::register_kernels(); !r) {
    std::printf("host portable kernels: %s\n", r.status().message().c_str());
    ok = false;
  }
#if defined(HOST_REGISTERS_XNNPACK)
  if (auto r = et_ops::kernels::xnnpack::register_kernels(); !r) {
    std::printf("host xnnpack kernels: %s\n", r.status().message().c_str());
    ok = false;
  }
#endif
  Py_Initialize();  // the plugins and et_ops come from PYTHONPATH
  if (!o.python_policy.empty())
    ok = ok && python("import et_ops; et_ops.set_duplicate_policy('" + o.python_policy + "')");
  if (o.with_et_ops_module) ok = ok && python("import et_ops; print('python: et_ops module imported')");
  const std::string module = "et_ops_plugin_" + o.plugin;
  if (o.order == "host-first") {
    ok = register_host() && ok;
    ok = ok && register_plugin(module);
  } else {
    ok = ok && register_plugin(module);
    ok = register_host() && ok;
  }
  print_registry();
  if (ok && o.python_side) ok = print_python_registry();
  if (ok && !o.program.empty()) {
    std::vector<uint8_t> output = run_in_cpp(o);
    ok = !output.empty() && (!o.python_side || compare_with_python(o, output));
  }
  if (o.print_libraries) print_loaded_libraries();
  std::fflush(stdout);
  Py_FinalizeEx();
  return ok ? 0 : 1;
}
