// A C++ application that embeds Python. It registers the quantized kernels
// it links, then runs a Python script in the same process; whatever that
// script registers goes into the same registry, the one of libet_ops.so.
//   host SCRIPT.py [ARGS...]    (SCRIPT.py sees ARGS in sys.argv[1:])
#include <Python.h>

#include <et_ops/kernels/quantized.h>
#include <et_ops/registry.h>

#include <cstdio>
#include <iostream>

namespace {

// Runs SCRIPT.py with sys.argv = [SCRIPT.py, ARGS...]; false when it raised.
bool run_python(int argc, char** argv) {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);  // reads PYTHONPATH, like python3 does
  config.parse_argv = 0;               // the arguments are the script's, not the interpreter's
  PyStatus status = PyConfig_SetBytesArgv(&config, argc, argv);
  if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
  PyConfig_Clear(&config);
  if (PyStatus_Exception(status)) return std::cerr << "host: cannot start Python\n", false;
  FILE* script = std::fopen(argv[0], "r");
  if (script == nullptr) return std::cerr << "host: cannot open " << argv[0] << "\n", false;
  const bool ok = PyRun_SimpleFileEx(script, argv[0], /*closeit=*/1) == 0;
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::cerr << "usage: " << argv[0] << " SCRIPT.py [ARGS...]\n", 2;
  et_ops::RegistrationResult result = et_ops::kernels::quantized::register_kernels();
  if (!result) return std::cerr << result.status().message(), 1;
  std::cout << "host: registered " << result->registered << " quantized kernels" << std::endl;

  const bool ok = run_python(argc - 1, argv + 1);
  const et_ops::Counters counters = et_ops::counters();
  std::cout << "host: the registry holds " << et_ops::registered_records().size() << " records, "
            << counters.deduplicated << " of them deduplicated copies" << std::endl;
  Py_FinalizeEx();
  return ok ? 0 : 1;
}
