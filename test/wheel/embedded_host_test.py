#!/usr/bin/env python3
"""A C++ host built against the wheel's SDK that embeds Python (the embedded
host of test/embedded_python, linked with the wheel's libraries through its
pkg-config files), run with the wheel's virtual environment activated.

- One registry: the host registers the quantized kernels, the embedded
  interpreter imports et_ops from the environment, and under 'fatal' nothing
  aborts: the extension links the wheel's libraries, so the process holds
  one libet_ops and one copy of each kernel library, and C++ and Python see
  the same records and run the example with the same bytes.
- The contrast: a package installed next to et_ops that carries its own
  copy of the quantized kernels (et_ops_plugin_vendored) aborts the process
  under 'fatal' and coexists under 'first-wins' (its copy deduplicated).

Usage: embedded_host_test.py HOST EXAMPLE_DIR VENV
"""
import os
import signal
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "embedded_python"))
from host_runner import QUANTIZED_OPERATORS, line, loaded_libraries, numbers  # noqa: E402
import host_runner  # noqa: E402

HOST, EXAMPLE, VENV = sys.argv[1:4]
PROGRAM = os.path.join(EXAMPLE, "qmlp.etp")
INPUT = os.path.join(EXAMPLE, "qmlp_input_0.npy")
PROGRAM_ARGS = ["--program", PROGRAM, "--input", INPUT]


def activated_environment():
    """The environment of a shell that ran VENV/bin/activate: the embedded
    interpreter finds the virtual environment from PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH")}
    env["VIRTUAL_ENV"] = VENV
    env["PATH"] = os.path.join(VENV, "bin") + os.pathsep + env.get("PATH", "")
    return env


ENV = activated_environment()
LIBDIR = subprocess.run([os.path.join(VENV, "bin", "python3"), "-m", "et_ops", "--libdir"], env=ENV,
                        capture_output=True, text=True, check=True).stdout.strip()


def run_host(policy, plugin, order="host-first", extra=()):
    return host_runner.run_host(HOST, policy, plugin, order, extra, env=ENV)


class OneRegistry(unittest.TestCase):
    def check_one_registry(self, r):
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cpp = numbers(line(r.stdout, "registry:"))
        self.assertEqual(cpp, numbers(line(r.stdout, "python registry:")))
        self.assertEqual((cpp["deduplicated"], cpp["conflicts"]), (0, 0))
        self.assertIn("program: C++ and Python outputs byte-identical", r.stdout)
        paths = loaded_libraries(r.stdout)
        names = [os.path.basename(p) for p in paths]
        self.assertEqual(len(names), len(set(names)), r.stdout)  # each library once, the wheel's
        self.assertIn("libet_ops.so.0", names)
        self.assertIn("libet_kernels_quantized.so.0", names)
        for path in paths:
            self.assertTrue(os.path.samefile(path, os.path.join(LIBDIR, os.path.basename(path))), path)

    def test_module_imported_first_then_the_host_registers(self):
        r = run_host("fatal", "none", extra=["--with-et-ops-module", "--python-side", "--print-libraries",
                                             *PROGRAM_ARGS])
        self.check_one_registry(r)
        self.assertIn("python: et_ops module imported", r.stdout)
        host = numbers(line(r.stdout, "host:"))
        self.assertEqual((host["registered"], host["unchanged"]), (0, QUANTIZED_OPERATORS))

    def test_host_registers_first_then_python_imports_et_ops(self):
        r = run_host("fatal", "none", extra=["--python-side", "--print-libraries", *PROGRAM_ARGS])
        self.check_one_registry(r)
        host = numbers(line(r.stdout, "host:"))
        self.assertEqual((host["registered"], host["unchanged"]), (QUANTIZED_OPERATORS, 0))


class VendoredCopy(unittest.TestCase):
    def test_fatal_aborts_in_both_orders(self):
        for order in ("host-first", "plugin-first"):
            with self.subTest(order=order):
                r = run_host("fatal", "vendored", order)
                self.assertEqual(r.returncode, -signal.SIGABRT, r.stdout + r.stderr)
                self.assertTrue(r.stderr.startswith("Re-registering quantized_decomposed::"), r.stderr)
                self.assertIn(os.path.join(LIBDIR, "libet_kernels_quantized.so.0"), r.stderr)
                self.assertIn(os.path.join("et_ops_plugin_vendored", "libet_kernels_quantized.so.0"), r.stderr)
                self.assertIn("first-wins", r.stderr)

    def test_first_wins_coexists_in_both_orders(self):
        for order in ("host-first", "plugin-first"):
            with self.subTest(order=order):
                r = run_host("first-wins", "vendored", order, ["--python-side", "--print-libraries", *PROGRAM_ARGS])
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                plugin = numbers(line(r.stdout, "plugin:"))
                self.assertEqual((plugin["ok"], plugin["deduplicated"]), (1, QUANTIZED_OPERATORS))
                cpp = numbers(line(r.stdout, "registry:"))
                self.assertEqual(cpp, numbers(line(r.stdout, "python registry:")))
                self.assertEqual((cpp["deduplicated"], cpp["conflicts"]), (QUANTIZED_OPERATORS, 0))
                self.assertIn("program: C++ and Python outputs byte-identical", r.stdout)
                names = [os.path.basename(p) for p in loaded_libraries(r.stdout)]
                self.assertEqual(names.count("libet_ops.so.0"), 1, r.stdout)
                self.assertEqual(names.count("libet_kernels_quantized.so.0"), 2, r.stdout)


if __name__ == "__main__":
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"wheel embedded host: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
