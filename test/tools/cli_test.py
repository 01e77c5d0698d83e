"""CLI tests of et-ops: exit codes, run/inspect/doctor/ops/check output,
--version, every command's --help, and the bash completion script.

make_cli_programs writes the programs and .npy inputs; this script runs
et-ops on them. Tests that need a kernel library run when its path is
given (meson passes it whenever the library is built). Every failed check
is printed; the exit status is 1 if any failed.
"""
import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import operator_tables  # noqa: E402  (test/operator_tables.py)

failures = []


def check(condition, what, result=None):
    if condition:
        return
    detail = ""
    if result is not None:
        detail = f"\n    exit {result.returncode}\n    stdout: {result.stdout.strip()}\n    stderr: {result.stderr.strip()}"
    failures.append(f"{what}{detail}")


class Cli:
    def __init__(self, et_ops, workdir):
        self.et_ops = et_ops
        self.workdir = workdir

    def __call__(self, *args):
        return subprocess.run([self.et_ops, *args], capture_output=True, text=True, cwd=self.workdir,
                              env={**os.environ, "ET_OPS_DUPLICATE_POLICY": ""})

    def path(self, name):
        return os.path.join(self.workdir, name)


def test_usage(cli):
    for args, fragment in [
        ((), "no command given"),
        (("frobnicate",), "unknown command 'frobnicate'"),
        (("run",), "expected 1 argument(s), got 0"),
        (("run", "a.etp", "b.etp"), "expected 1 argument(s), got 2"),
        (("run", "quantized.etp", "--kernels", "portable,bogus"), "unknown kernel set 'bogus'"),
        (("run", "quantized.etp", "--repeat", "0"), "--repeat: '0' is not a positive number"),
        (("run", "quantized.etp", "--repeat", "many"), "--repeat: 'many'"),
        (("run", "quantized.etp", "--policy", "maybe"), "unknown policy 'maybe'"),
        (("run", "quantized.etp", "--frobnicate"), "unknown option --frobnicate"),
        (("run", "quantized.etp", "--input"), "--input needs a value"),
        (("run", "quantized.etp", "--output-dir", "a", "--output-dir", "b"), "may be given only once"),
        (("ops", "extra"), "ops: expected 0 argument(s), got 1"),
        (("ops", "--json=yes"), "--json takes no value"),
        (("doctor",), "expected 1 argument(s)"),
    ]:
        result = cli(*args)
        check(result.returncode == 2 and fragment in result.stderr and "usage: et-ops" in result.stderr,
              f"usage error {args}: expected exit 2 and '{fragment}'", result)
    result = cli("--help")
    check(result.returncode == 0 and "usage: et-ops" in result.stdout, "--help exits 0 with the usage", result)


COMMANDS = {  # every command and the options its --help must list
    "run": ["--input FILE.npy", "--batch", "--output-dir DIR", "--repeat N", "--profile FILE.json", "--kernels LIST",
            "--policy P", "--load-library PATH"],
    "generate": ["--prompt-tokens LIST", "--tokenizer M.model", "--prompt TEXT", "--max-new-tokens N",
                 "--temperature T", "--top-k K", "--seed S", "--stop-tokens LIST", "--threads N",
                 "--profile FILE.json", "--kernels LIST"],
    "inspect": ["--json"],
    "doctor": ["--kernels LIST", "--policy P", "--load-library PATH"],
    "ops": ["--json", "--kernels LIST", "--policy P", "--load-library PATH"],
    "check": ["--json"],
    "completion": [],
}


def test_version(cli, version):
    for flag in ("--version", "-V"):
        result = cli(flag)
        check(result.returncode == 0 and result.stdout == f"et-ops {version}\n" and not result.stderr,
              f"{flag} prints 'et-ops {version}' and exits 0", result)


def test_help(cli):
    result = cli("--help")
    listed = [line.split()[0] for line in result.stdout.split("commands:\n", 1)[-1].splitlines()
              if line.startswith("  ") and not line.startswith("   ")]
    check(result.returncode == 0 and listed == list(COMMANDS), f"--help lists every command: {listed}", result)
    for command, options in COMMANDS.items():
        for args in ((command, "--help"), (command, "-h"), ("help", command), (command, "x.etp", "--help")):
            result = cli(*args)
            usage = f"usage: et-ops {command}"
            check(result.returncode == 0 and result.stdout.startswith(usage) and not result.stderr
                  and all(o in result.stdout for o in options + ["-h, --help"]),
                  f"{' '.join(args)}: exit 0 with the usage of {command} and its options {options}", result)
    result = cli("run", "--", "--help")
    check(result.returncode == 1 and "--help: cannot open" in result.stderr,
          "after --, --help is a file name", result)
    result = cli("help", "frobnicate")
    check(result.returncode == 2 and "unknown command 'frobnicate'" in result.stderr, "help of an unknown command",
          result)
    result = cli("run", "--frobnicate")
    check(result.returncode == 2 and "usage: et-ops run" in result.stderr and "et-ops run --help" in result.stderr,
          "a usage error shows the command's usage, not the global one", result)


def test_inspect(cli):
    result = cli("inspect", "inspect.etp")
    out = result.stdout
    expected_lines = [
        "program inspect.etp\n",
        "inputs (1):\n  0  %0 float32 [1, 2, 3, 3] dim_order [0, 2, 3, 1]\n",
        "outputs (1):\n  0  %10 float32 [2, 2, 3, 3] dim_order [0, 1, 2, 3]\n",
        "constants: 3 tensor(s), 38 bytes; float64: 1 (16 bytes), int64: 1 (16 bytes), int8: 1 (6 bytes)\n",
        "  %1  int8 [2, 3], 6 bytes\n",
        "instructions (2, 2 operator(s)):\n",
        "  0  vendor::mix.out(%0 float32 [1, 2, 3, 3] dim_order [0, 2, 3, 1] (input 0), %1 int8 [2, 3] (constant), "
        "%2 float64 [2] (constant), %3 int64 [2] (constant), %5 int_list [0, 1], %7 bool true, %8 none, "
        "%9 double 0.125, %4 float32 [1, 2, 3, 3])\n",
        "  1  vendor::cat.out(%6 tensor_list [%0, %4], %11 int 0, %10 float32 [2, 2, 3, 3] (output 0))\n",
        # 72, 72 and 144 bytes, each at a multiple of 64; the input and the output live for the whole run.
        "planned memory: 448 bytes per run state",
        "of which at most 448 are live at once\n",
        'metadata: {"purpose":"inspect"}\n',
    ]
    check(result.returncode == 0 and all(line in out for line in expected_lines) and "('')" not in out,
          "inspect: an unnamed program with every kind of value, its operators unregistered", result)
    result = cli("inspect", "inspect.etp", "--json")
    try:
        p = json.loads(result.stdout)
        check(result.returncode == 0 and p["name"] == "" and p["planned_memory_bytes"] == 448
              and p["peak_live_bytes"] == 448
              and p["inputs"] == [{"value_index": 0, "type": "tensor", "dtype": "float32", "shape": [1, 2, 3, 3],
                                   "dim_order": [0, 2, 3, 1], "constant": False}]
              and [o["shape"] for o in p["outputs"]] == [[2, 2, 3, 3]]
              and p["constants"]["count"] == 3 and p["constants"]["bytes"] == 38
              and p["constants"]["dtypes"] == {"int8": {"count": 1, "bytes": 6}, "float64": {"count": 1, "bytes": 16},
                                               "int64": {"count": 1, "bytes": 16}}
              and [t["value_index"] for t in p["constants"]["tensors"]] == [1, 2, 3]
              and p["operators"] == ["vendor::mix.out", "vendor::cat.out"]
              and [i["op"] for i in p["instructions"]] == p["operators"]
              and [a["type"] for a in p["instructions"][0]["args"]] ==
              ["tensor", "tensor", "tensor", "tensor", "int_list", "bool", "none", "double", "tensor"]
              and p["instructions"][0]["args"][7]["value"] == 0.125
              and p["instructions"][1]["args"][0]["value"] == [0, 4]
              and p["metadata"] == {"purpose": "inspect"},
              "inspect --json: name, inputs, outputs, constants, instructions, planned memory", result)
    except (ValueError, KeyError, IndexError) as e:
        check(False, f"inspect --json parses: {e}", result)
    result = cli("inspect", "quantized.etp")
    check(result.returncode == 0 and result.stdout.startswith("program quantized.etp ('qdq')\n")
          and "planned memory: 192 bytes" in result.stdout
          and "quantized_decomposed::quantize_per_tensor.out(%0 float32 [2, 4] (input 0), %3 double 0.1, %4 int 0, "
              "%5 int -128, %6 int 127, %7 scalar_type int8, %1 int8 [2, 4] (output 0))" in result.stdout,
          "inspect names the program and shows each instruction's arguments", result)
    result = cli("inspect", "broken.etp")
    check(result.returncode == 1 and "broken.etp: header size 65535 bytes runs past the end" in result.stderr,
          "inspect of a broken file names it and the problem", result)
    result = cli("doctor", "inspect.etp")
    check(result.returncode == 1 and result.stdout.startswith("program inspect.etp needs 2 operator(s):\n"),
          "doctor on an unnamed program prints no empty name", result)


def completions(script, words, workdir):
    """What bash completion offers after `words` (the last one is being typed)."""
    program = (f"source {shlex.quote(script)}\n"
               f"COMP_WORDS=({' '.join(shlex.quote(w) for w in words)}); COMP_CWORD={len(words) - 1}\n"
               "_et_ops; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    result = subprocess.run(["bash", "--norc", "-c", program], capture_output=True, text=True, cwd=workdir)
    return sorted(filter(None, result.stdout.splitlines())) if result.returncode == 0 else [f"error: {result.stderr}"]


def test_completion(cli, installed_script):
    result = cli("completion", "bash")
    check(result.returncode == 0 and "complete -F _et_ops et-ops" in result.stdout, "completion bash prints the script",
          result)
    with open(installed_script, encoding="utf-8") as f:
        check(f.read() == result.stdout, "the installed completion script is what 'et-ops completion bash' prints")
    result = cli("completion", "zsh")
    check(result.returncode == 2 and "unknown shell 'zsh'" in result.stderr, "completion of an unknown shell", result)
    for words, expected in [
        (["et-ops", ""], sorted(list(COMMANDS) + ["help", "--help", "--version"])),
        (["et-ops", "in"], ["inspect"]),
        (["et-ops", "help", "d"], ["doctor"]),
        (["et-ops", "run", "--k"], ["--kernels"]),
        (["et-ops", "generate", "lm.etp", "--pro"], ["--profile", "--prompt", "--prompt-tokens"]),
        (["et-ops", "run", "quantized.etp", "--kernels", "p"], ["portable"]),
        (["et-ops", "run", "quantized.etp", "--kernels", "portable,q"], ["portable,quantized"]),
        (["et-ops", "doctor", "--policy", "f"], ["fatal", "first-wins"]),
        (["et-ops", "run", "q"], ["quantized.etp"]),
        (["et-ops", "run", "quantized.etp", "--input", "x_"], ["x_flat.npy", "x_int8.npy"]),
        (["et-ops", "inspect", "--"], ["--help", "--json"]),
        (["et-ops", "check", "not_"], []),
        (["et-ops", "completion", ""], ["bash"]),
    ]:
        offered = completions(installed_script, words, cli.workdir)
        check(offered == expected, f"completing {words[1:]}: {offered}, expected {expected}")


def test_bad_programs(cli):
    result = cli("run", "absent.etp", "--kernels", "")
    check(result.returncode == 1 and "absent.etp: cannot open" in result.stderr, "run on a missing file", result)
    result = cli("run", "broken.etp", "--kernels", "")
    check(result.returncode == 1 and "broken.etp: header size 65535 bytes runs past the end" in result.stderr,
          "run on a broken file names it and the problem", result)
    result = cli("doctor", "broken.etp")
    check(result.returncode == 1 and "broken.etp" in result.stderr, "doctor on a broken file", result)


def test_plugin(cli, plugin):
    result = cli("run", "plugin.etp", "--kernels", "", "--load-library", plugin, "--input", "three.npy")
    check(result.returncode == 0 and "output 0: float32 [3]: -1.5, 2, -0 (3 values)" in result.stdout
          and "load: " in result.stdout and "run: " in result.stdout,
          "run with --load-library prints a summary and the timing", result)
    result = cli("run", "plugin.etp", "--kernels", "", "--load-library", "no_such_library.so", "--input", "three.npy")
    check(result.returncode == 1 and "no_such_library.so: no such kernel library" in result.stderr,
          "--load-library of a missing file", result)
    result = cli("run", "plugin.etp", "--kernels", "", "--input", "three.npy")
    check(result.returncode == 1 and "et_test_plugin::negate.out  (not provided by any et_ops component)" in result.stderr,
          "a missing operator of no component", result)
    result = cli("ops", "--json", "--kernels", "", "--load-library", plugin)
    try:
        records = json.loads(result.stdout)["operators"]
        negate = [r for r in records if r["op"] == "et_test_plugin::negate.out"]
        check(result.returncode == 0 and len(negate) == 1 and negate[0]["component"] == "test_plugin"
              and os.path.samefile(negate[0]["library"], plugin) and negate[0]["key"] == "fallback",
              "ops --json lists the loaded library's operator", result)
    except (ValueError, KeyError) as e:
        check(False, f"ops --json parses: {e}", result)
    result = cli("check", plugin, "not_a_library.txt")
    check(result.returncode == 1 and "not_a_library.txt: cannot load" in result.stderr,
          "check names a file that is not a library", result)


def quantize_reference(x, scale):
    return np.clip(np.round(x / np.float32(scale)), -128, 127).astype(np.int8)


def test_quantized_run(cli):
    x = np.load(cli.path("x.npy"))
    out = cli.path("out")
    result = cli("run", "quantized.etp", "--input", "x.npy", "--output-dir", out)
    check(result.returncode == 0 and "wrote " in result.stdout, "run --output-dir", result)
    if result.returncode == 0:
        q = np.load(os.path.join(out, "output_0.npy"))
        y = np.load(os.path.join(out, "output_1.npy"))
        expected = quantize_reference(x, 0.1)
        check(q.dtype == np.int8 and q.shape == (2, 4) and np.array_equal(q, expected),
              f"output_0.npy is the quantized input: {q} vs {expected}")
        check(y.dtype == np.float32 and np.allclose(y, expected.astype(np.float32) * np.float32(0.1)),
              f"output_1.npy is the dequantized input: {y}")
    result = cli("run", "quantized.etp", "--input", "x.npy")
    check(result.returncode == 0 and "output 0: int8 [2, 4]: -10, -3, 0, 1, 5, 10, 30, 127 (8 values)" in result.stdout,
          "run without --output-dir prints each output", result)
    result = cli("run", "quantized.etp", "--input", "x.npy", "--repeat", "5")
    check(result.returncode == 0 and "run: 5 runs, median " in result.stdout and " min " in result.stdout
          and " max " in result.stdout, "--repeat prints median, min and max", result)


def test_batch_run(cli):
    x = np.load(cli.path("x.npy"))
    batch = np.stack([x, x * np.float32(0.5), -x])
    np.save(cli.path("batch.npy"), batch)
    out = cli.path("batch_out")
    result = cli("run", "quantized.etp", "--batch", "--input", "batch.npy", "--output-dir", out, "--repeat", "2")
    check(result.returncode == 0 and "run: 3 inputs, 2 passes: median " in result.stdout
          and " per input, min " in result.stdout, "run --batch times each input", result)
    if result.returncode == 0:
        q = np.load(os.path.join(out, "output_0.npy"))
        y = np.load(os.path.join(out, "output_1.npy"))
        expected = np.stack([quantize_reference(item, 0.1) for item in batch])
        check(q.shape == (3, 2, 4) and np.array_equal(q, expected), f"--batch stacks output 0: {q} vs {expected}")
        check(y.shape == (3, 2, 4) and np.allclose(y, expected.astype(np.float32) * np.float32(0.1)),
              f"--batch stacks output 1: {y}")
    result = cli("run", "quantized.etp", "--batch", "--input", "batch.npy")
    check(result.returncode == 0 and "output 0: int8 [3, 2, 4]: -10, -3, 0, 1, 5, 10, 30, 127, ..." in result.stdout,
          "run --batch without --output-dir prints each stacked output", result)
    np.save(cli.path("empty_batch.npy"), batch[:0])
    for args, fragment in [
        (("--input", "x.npy"), "x.npy: shape [2, 4] is not a batch of input 0 of the program ([N, 2, 4])"),
        (("--input", "empty_batch.npy"), "empty_batch.npy: the batch holds no inputs"),
        (("--input", "x_int8.npy"), "x_int8.npy: dtype int8 does not match input 0 of the program (float32)"),
    ]:
        result = cli("run", "quantized.etp", "--batch", *args)
        check(result.returncode == 1 and fragment in result.stderr, f"batch input error {args}", result)


def test_dynamic_run(cli):
    """A program with bounded dynamic shapes takes inputs of any sizes within
    its bounds, one run or a batch; its outputs have the run's sizes."""
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal((3, 2)).astype(np.float32) for _ in range(2))
    for name, array in [("dyn_a.npy", a), ("dyn_b.npy", b), ("dyn_short.npy", b[:2]),
                        ("dyn_long.npy", np.zeros((5, 2), np.float32)), ("dyn_a_batch.npy", np.stack([a, -a])),
                        ("dyn_b_batch.npy", np.stack([b, b]))]:
        np.save(cli.path(name), array)
    out = cli.path("dynamic_out")
    result = cli("run", "dynamic.etp", "--input", "dyn_a.npy", "--input", "dyn_b.npy", "--output-dir", out)
    check(result.returncode == 0 and "wrote " in result.stdout and "(float32 [3, 2])" in result.stdout,
          "run takes inputs of T = 3 within T's bounds [1, 4]", result)
    if result.returncode == 0:
        y = np.load(os.path.join(out, "output_0.npy"))
        check(y.shape == (3, 2) and np.array_equal(y, a + b), f"the dynamic output is a + b: {y} vs {a + b}")
    result = cli("run", "dynamic.etp", "--input", "dyn_short.npy", "--input", "dyn_short.npy", "--repeat", "2")
    check(result.returncode == 0 and "output 0: float32 [2, 2]: " in result.stdout,
          "run prints the output with the run's sizes", result)
    result = cli("run", "dynamic.etp", "--batch", "--input", "dyn_a_batch.npy", "--input", "dyn_b_batch.npy",
                 "--output-dir", out)
    check(result.returncode == 0 and "(float32 [2, 3, 2])" in result.stdout, "run --batch of dynamic inputs", result)
    if result.returncode == 0:
        y = np.load(os.path.join(out, "output_0.npy"))
        check(np.array_equal(y, np.stack([a + b, b - a])), f"--batch stacks the dynamic outputs: {y}")
    for args, fragment in [
        (("--input", "dyn_long.npy", "--input", "dyn_long.npy"),
         "dyn_long.npy: shape [5, 2] does not match input 0 of the program ([1 to 4, 2])"),
        (("--input", "dyn_a.npy", "--input", "dyn_short.npy"),
         "input 1 dimension 0 is 2, but input 0 dimension 0 makes T = 3, so it must be 3"),
        (("--batch", "--input", "dyn_a.npy", "--input", "dyn_b.npy"),
         "dyn_a.npy: shape [3, 2] is not a batch of input 0 of the program ([N, 1 to 4, 2])"),
    ]:
        result = cli("run", "dynamic.etp", *args)
        check(result.returncode == 1 and fragment in result.stderr, f"dynamic input error {args}", result)


def test_quantized_failures(cli):
    for args, fragment in [
        (("--input", "x_int8.npy"), "x_int8.npy: dtype int8 does not match input 0 of the program (float32)"),
        (("--input", "x_flat.npy"), "x_flat.npy: shape [8] does not match input 0 of the program ([2, 4])"),
        ((), "quantized.etp: the program takes 1 input(s), got 0 --input file(s)"),
        (("--input", "absent.npy"), "absent.npy: cannot open"),
    ]:
        result = cli("run", "quantized.etp", *args)
        check(result.returncode == 1 and fragment in result.stderr, f"input error {args}", result)
    result = cli("run", "bad_scale.etp", "--input", "x.npy")
    check(result.returncode == 1 and "bad_scale.etp: instruction 0 (quantized_decomposed::quantize_per_tensor.out): "
          in result.stderr, "a kernel error names the instruction and operator", result)


def test_missing_component(cli, have_portable):
    kernels = "portable" if have_portable else ""
    result = cli("run", "quantized.etp", "--kernels", kernels, "--input", "x.npy")
    check(result.returncode == 1 and "et-kernels-quantized" in result.stderr
          and "quantized_decomposed::quantize_per_tensor.out" in result.stderr
          and "quantized_decomposed::dequantize_per_tensor.out" in result.stderr
          and "packaging problem" in result.stderr,
          f"run --kernels '{kernels}' on a quantized program names et-kernels-quantized", result)


def test_doctor(cli, have_quantized, have_portable):
    result = cli("doctor", "needs_everything.etp")
    out = result.stdout
    check(result.returncode == 1 and "needs 4 operator(s)" in out, "doctor lists what a program needs", result)
    check("vendor::secret.out" in out and "MISSING; not provided by any et_ops component" in out,
          "doctor: an operator of no component", result)
    relu_state = "registered (kernels_portable" if have_portable else "MISSING"
    check(f"{relu_state}" in out and "provided by kernels_portable (libet_kernels_portable.so, pkg-config et-kernels-portable)" in out,
          "doctor: aten::relu.out and its component", result)
    if have_quantized:
        check("registered (kernels_quantized" in out, "doctor: registered quantized operators", result)
        result = cli("doctor", "quantized.etp")
        check(result.returncode == 0 and "2 registered, 0 missing" in result.stdout, "doctor on a satisfied program", result)
    result = cli("doctor", "quantized.etp", "--kernels", "")
    check(result.returncode == 1 and "0 registered, 2 missing" in result.stdout
          and "provided by kernels_quantized" in result.stdout and "et-kernels-quantized" in result.stdout,
          "doctor with no kernels registered", result)


def test_check_shipped(cli, have_both):
    result = cli("check")
    if have_both:
        check(result.returncode == 0 and "collisions: none" in result.stdout
              and "kernels_quantized" in result.stdout and "kernels_portable" in result.stdout,
              "check of the two shipped libraries: no collision", result)
    else:
        check(result.returncode == 1 and "no such kernel library" in result.stderr,
              "check without both shipped libraries reports the missing one", result)


def test_check_copies(cli, quantized_library):
    copies = []
    for name in ["a", "b"]:
        os.makedirs(cli.path(name), exist_ok=True)
        copies.append(shutil.copy(quantized_library, cli.path(name)))
    result = cli("check", *copies)
    count = len(operator_tables.operators_in_def("quantized"))
    check(result.returncode == 1 and f"collisions: {count} operator(s)" in result.stdout
          and "quantized_decomposed::add.out [fallback]: identical copies" in result.stdout,
          f"check of two copies of one library: {count} identical collisions", result)
    result = cli("check", "--json", *copies)
    try:
        report = json.loads(result.stdout)
        check(result.returncode == 1 and not report["ok"] and len(report["collisions"]) == count
              and all(c["identical"] for c in report["collisions"]) and len(report["libraries"]) == 2,
              "check --json of two copies", result)
    except (ValueError, KeyError) as e:
        check(False, f"check --json parses: {e}", result)
    result = cli("check", quantized_library, quantized_library)
    check(result.returncode == 0 and "collisions: none" in result.stdout, "the same file named twice is one library",
          result)


def test_ops(cli, have_quantized):
    result = cli("ops", "--json")
    try:
        document = json.loads(result.stdout)
        ops = {r["op"]: r for r in document["operators"]}
        check(result.returncode == 0 and "counters" in document, "ops --json parses", result)
        if have_quantized:
            add = ops.get("quantized_decomposed::add.out", {})
            check(add.get("component") == "kernels_quantized" and len(add.get("fingerprint", "")) == 32
                  and "libet_kernels_quantized" in add.get("library", ""),
                  "ops --json: quantized_decomposed::add.out from kernels_quantized", result)
    except (ValueError, KeyError) as e:
        check(False, f"ops --json parses: {e}", result)
    result = cli("ops")
    check(result.returncode == 0 and "record(s)" in result.stdout, "ops prints a table", result)


def test_portable_run(cli):
    x = np.load(cli.path("x.npy"))
    out = cli.path("relu_out")
    result = cli("run", "portable.etp", "--input", "x.npy", "--output-dir", out)
    check(result.returncode == 0, "run a portable program with column-major input and output", result)
    if result.returncode == 0:
        y = np.load(os.path.join(out, "output_0.npy"))
        check(np.array_equal(y, np.maximum(x, 0)), f"relu output in logical order: {y}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--et-ops", required=True)
    parser.add_argument("--make-programs", required=True)
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--quantized-library")
    parser.add_argument("--portable-library")
    parser.add_argument("--version", required=True, help="the version et-ops --version must print")
    parser.add_argument("--completion", required=True, help="the bash completion script the build installs")
    options = parser.parse_args()
    # meson passes build-relative paths; the tests run et-ops from a temporary directory.
    for name in ["et_ops", "make_programs", "plugin", "quantized_library", "portable_library", "completion"]:
        if getattr(options, name) is not None:
            setattr(options, name, os.path.abspath(getattr(options, name)))
    have_quantized = options.quantized_library is not None
    have_portable = options.portable_library is not None
    with tempfile.TemporaryDirectory() as workdir:
        subprocess.run([options.make_programs, workdir], check=True)
        with open(os.path.join(workdir, "not_a_library.txt"), "w") as f:
            f.write("hello\n")
        cli = Cli(options.et_ops, workdir)
        test_usage(cli)
        test_version(cli, options.version)
        test_help(cli)
        test_inspect(cli)
        test_completion(cli, options.completion)
        test_bad_programs(cli)
        test_plugin(cli, options.plugin)
        test_missing_component(cli, have_portable)
        test_doctor(cli, have_quantized, have_portable)
        test_check_shipped(cli, have_quantized and have_portable)
        test_ops(cli, have_quantized)
        if have_quantized:
            test_quantized_run(cli)
            test_batch_run(cli)
            test_quantized_failures(cli)
            test_check_copies(cli, options.quantized_library)
        if have_portable:
            test_portable_run(cli)
            test_dynamic_run(cli)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
