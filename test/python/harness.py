"""Shared pieces of the Python tests: the runner, paths, subprocess helpers.

Every test script ends with `harness.main("<name>")`, which runs its
unittest cases, prints "<name>: N passed, M failed" as its last line and
exits non-zero when anything failed. A skipped case counts as a failure:
tests are declared only when what they need is built, so a skip would hide
something.
"""

import os
import re
import subprocess
import sys
import unittest

SOURCE_ROOT = os.environ["ET_OPS_SOURCE_ROOT"]
sys.path.insert(0, os.path.join(SOURCE_ROOT, "test"))
import operator_tables  # noqa: E402  (test/operator_tables.py)


def source_path(*parts):
    return os.path.join(SOURCE_ROOT, *parts)


def operators_in_def(component):
    """Operator names listed in src/kernels/<component>/operators.def."""
    return operator_tables.operators_in_def(component)


def project_version():
    """The version in the project() call of meson.build."""
    with open(source_path("meson.build"), encoding="utf-8") as f:
        return re.search(r"^\s*version:\s*'([^']+)'", f.read(), re.M).group(1)


def run_python(code, env_overrides=None, cwd=None, timeout=300):
    """Runs `code` in a fresh interpreter (this one) with the test environment."""
    env = dict(os.environ)
    env.update(env_overrides or {})
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def main(name):
    suite = unittest.defaultTestLoader.loadTestsFromModule(sys.modules["__main__"])
    result = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors) + len(result.skipped) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed
    print(f"{name}: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and result.testsRun > 0 else 1)
