"""Running the embedded-Python host (host.cpp) and reading what it prints,
for the build tree's matrix (test_embedded.py) and the wheel's test
(test/wheel/embedded_host_test.py)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import operator_tables  # noqa: E402  (test/operator_tables.py)

QUANTIZED_OPERATORS = len(operator_tables.operators_in_def("quantized"))


def run_host(host, policy=None, plugin="identical", order="host-first", extra=(), env=None):
    """Runs the host under ET_OPS_DUPLICATE_POLICY=policy (unset for None)."""
    env = dict(os.environ if env is None else env)
    env.pop("ET_OPS_DUPLICATE_POLICY", None)
    if policy is not None:
        env["ET_OPS_DUPLICATE_POLICY"] = policy
    args = [host, "--plugin", plugin, "--order", order, *extra]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


def line(output, prefix):
    """The first line of output that starts with prefix."""
    found = [l for l in output.splitlines() if l.startswith(prefix)]
    if not found:
        raise AssertionError(f"no line starting with {prefix!r} in:\n{output}")
    return found[0]


def numbers(text):
    """The name=number pairs of a line, as a dict."""
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", text)}


def loaded_libraries(output):
    """The paths of the project's shared objects the host held at the end (--print-libraries)."""
    return [l[len("loaded: "):] for l in output.splitlines() if l.startswith("loaded: ")]
