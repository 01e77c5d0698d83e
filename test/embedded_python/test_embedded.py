#!/usr/bin/env python3
"""The embedded-Python matrix: policy x registration order x plugin copy,
each case in its own host process.

Usage: test_embedded.py HOST_EXECUTABLE EXAMPLE_DIR  (PYTHONPATH holds the
plugins and the et_ops package)."""
import os
import signal
import sys
import unittest

from host_runner import QUANTIZED_OPERATORS, line, numbers
import host_runner

HOST, EXAMPLE = sys.argv[1], sys.argv[2]
PROGRAM = os.path.join(EXAMPLE, "qmlp.etp")
INPUT = os.path.join(EXAMPLE, "qmlp_input_0.npy")


def run_host(policy=None, plugin="identical", order="host-first", extra=()):
    return host_runner.run_host(HOST, policy, plugin, order, extra)


class FatalPolicy(unittest.TestCase):
    def test_second_copy_aborts_in_both_orders_identical_or_not(self):
        for plugin in ("identical", "modified"):
            for order in ("host-first", "plugin-first"):
                with self.subTest(plugin=plugin, order=order):
                    r = run_host("fatal", plugin, order)
                    self.assertEqual(r.returncode, -signal.SIGABRT, r.stdout + r.stderr)
                    self.assertTrue(r.stderr.startswith("Re-registering quantized_decomposed::"), r.stderr)
                    self.assertIn("libet_kernels_quantized.so", r.stderr)
                    self.assertIn(f"et_ops_plugin_{plugin}", r.stderr)
                    self.assertIn("first-wins", r.stderr)


class FirstWinsIdentical(unittest.TestCase):
    def test_copies_coexist_and_the_program_runs_from_both_sides(self):
        for order in ("host-first", "plugin-first"):
            with self.subTest(order=order):
                r = run_host("first-wins", "identical", order,
                             ["--python-side", "--program", PROGRAM, "--input", INPUT])
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                second = "plugin:" if order == "host-first" else "host:"
                self.assertEqual(numbers(line(r.stdout, second))["deduplicated"], QUANTIZED_OPERATORS)
                registry = numbers(line(r.stdout, "registry:"))
                self.assertGreaterEqual(registry["deduplicated"], QUANTIZED_OPERATORS)
                self.assertEqual(registry["conflicts"], 0)
                self.assertIn("program: C++ and Python outputs byte-identical", r.stdout)

    def test_both_sides_see_one_registry(self):
        r = run_host("first-wins", "identical", "host-first", ["--python-side"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        cpp = numbers(line(r.stdout, "registry:"))
        python = numbers(line(r.stdout, "python registry:"))
        self.assertEqual(cpp, python)


class FirstWinsModified(unittest.TestCase):
    def test_conflict_is_reported_and_the_host_keeps_running(self):
        for order in ("host-first", "plugin-first"):
            with self.subTest(order=order):
                r = run_host("first-wins", "modified", order, ["--program", PROGRAM, "--input", INPUT])
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                second = "plugin:" if order == "host-first" else "host:"
                self.assertEqual(numbers(line(r.stdout, second))["ok"], 0)
                message = r.stdout[r.stdout.index(second + " message:"):]
                self.assertIn("quantized_decomposed::quantize_per_tensor.out", message)
                self.assertIn("quantized_decomposed::add.out", message)
                self.assertIn("libet_kernels_quantized.so", message)
                self.assertIn("et_ops_plugin_modified", message)
                self.assertIn("fingerprint", message)
                registry = numbers(line(r.stdout, "registry:"))
                self.assertEqual(registry["conflicts"], QUANTIZED_OPERATORS)
                self.assertEqual(registry["deduplicated"], 0)
                self.assertIn("program: ran from C++", r.stdout)


class OwnModuleCoexists(unittest.TestCase):
    """The et_ops module links the shared kernel library: the same function
    addresses as the host's, so registering again is a no-op."""

    def test_under_both_policies(self):
        for policy in ("fatal", "first-wins"):
            with self.subTest(policy=policy):
                r = run_host(policy, "none", "host-first", ["--with-et-ops-module", "--python-side",
                                                            "--print-libraries", "--program", PROGRAM, "--input", INPUT])
                self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                host = numbers(line(r.stdout, "host:"))
                self.assertEqual(host["registered"], 0)
                self.assertEqual(host["unchanged"], QUANTIZED_OPERATORS)
                self.assertIn("program: C++ and Python outputs byte-identical", r.stdout)
                loaded = [os.path.basename(path) for path in host_runner.loaded_libraries(r.stdout)]
                self.assertEqual(len(loaded), len(set(loaded)), loaded)  # each library once
                self.assertIn("libet_ops.so.0", loaded)
                self.assertIn("libet_kernels_quantized.so.0", loaded)


class ChoosingThePolicy(unittest.TestCase):
    def test_environment_without_recompiling(self):
        self.assertEqual(run_host("fatal").returncode, -signal.SIGABRT)
        self.assertEqual(run_host("first-wins").returncode, 0)

    def test_from_python(self):
        r = run_host(None, "identical", "host-first", ["--python-policy", "first-wins"])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(numbers(line(r.stdout, "plugin:"))["deduplicated"], QUANTIZED_OPERATORS)

    def test_invalid_environment_value_is_an_error_not_a_guess(self):
        r = run_host("first_wins", "none", "host-first")
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("ET_OPS_DUPLICATE_POLICY", r.stdout)
        self.assertIn("'fatal'", r.stdout)
        self.assertEqual(numbers(line(r.stdout, "host:"))["ok"], 0)


if __name__ == "__main__":
    result = unittest.main(argv=sys.argv[:1], exit=False, verbosity=2).result
    failed = len(result.failures) + len(result.errors)
    print(f"embedded_python: {result.testsRun - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)
