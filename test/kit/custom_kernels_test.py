#!/usr/bin/env python3
"""examples/custom_kernels: its program, which uses acme_kernels' operators
next to et_ops's own, runs with `et-ops run --load-library` and from Python
with the same bytes, and matches a NumPy evaluation.

Usage: custom_kernels_test.py ET_OPS LIBRARY EXAMPLE_DIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

import et_ops

failures = 0


def check(condition, what, detail=""):
    global failures
    print(f"{'ok' if condition else 'FAILED'}: {what}")
    if not condition:
        failures += 1
        print(detail)


def reference(x):
    y = np.maximum(x * np.float32(0.5) + np.float32(1), 0)
    return (np.clip(np.round(y / np.float32(0.05)), -128, 127) * np.float32(0.05)).astype(np.float32)


def main():
    tool, library, example = sys.argv[1:]
    program = os.path.join(example, "custom.etp")
    x = np.load(os.path.join(example, "custom_input_0.npy"))
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([tool, "run", program, "--load-library", library, "--input",
                                 os.path.join(example, "custom_input_0.npy"), "--output-dir", out],
                                capture_output=True, text=True)
        check(result.returncode == 0, "et-ops run --load-library runs the program", result.stderr)
        from_cli = np.load(os.path.join(out, "output_0.npy")) if result.returncode == 0 else None

    result = subprocess.run([tool, "run", program, "--input", os.path.join(example, "custom_input_0.npy")],
                            capture_output=True, text=True)
    check(result.returncode == 1 and "acme::scale.out" in result.stderr and "--load-library" in result.stderr,
          "without the library, loading names its operators and how to load it", result.stderr)

    loaded = et_ops.load_library(library)
    check(loaded["registered"] == 2 and loaded["component"] == "acme_kernels", "et_ops.load_library", loaded)
    from_python = et_ops.load(program).run([x])[0]
    check(from_cli is not None and from_python.tobytes() == from_cli.tobytes(),
          "Python and et-ops give the same bytes")
    check(np.allclose(from_python, reference(x), atol=0.05 + 1e-6), "the outputs match NumPy",
          f"{from_python}\n{reference(x)}")
    records = [r for r in et_ops.registered_operators() if r["component"] == "acme_kernels"]
    check(sorted(r["op"] for r in records) == ["acme::scale.out", "acme::shift.out"]
          and all(len(r["fingerprint"]) == 32 for r in records), "the records carry build-time fingerprints", records)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
