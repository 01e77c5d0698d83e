"""NumPy interoperability of et_ops' .npy reader and writer.

Writes arrays of every program dtype with NumPy (format versions 1.0, 2.0
and 3.0), has et_ops read each one and write it back, and compares with
NumPy. Also checks that Fortran-order and big-endian files are refused
with a message naming the file.

usage: npy_numpy_test.py ROUNDTRIP_HELPER
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

DTYPES = ["<f4", "<f8", "<f2", "|i1", "|u1", "<i2", "<u2", "<i4", "<i8", "|b1"]


def sample(dtype, shape):
    rng = np.random.default_rng(7)
    if dtype == "|b1":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype[1] == "f":
        return (rng.standard_normal(size=shape) * 100).astype(dtype)
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=np.dtype(dtype))


def roundtrip(helper, directory, array, version):
    source = os.path.join(directory, "in.npy")
    target = os.path.join(directory, "out.npy")
    with open(source, "wb") as f:
        np.lib.format.write_array(f, array, version=version)
    result = subprocess.run([helper, source, target], capture_output=True, text=True)
    return result, target


def main():
    helper = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as directory:
        for dtype in DTYPES:
            for shape in [(2, 3), (5,), (), (0, 4), (2, 1, 3, 2)]:
                for version in [(1, 0), (2, 0), (3, 0)]:
                    array = sample(dtype, shape)
                    result, target = roundtrip(helper, directory, array, version)
                    label = f"{dtype} {shape} v{version}"
                    if result.returncode != 0:
                        failures.append(f"{label}: helper failed: {result.stderr.strip()}")
                        continue
                    back = np.load(target)
                    if back.dtype != array.dtype or back.shape != array.shape or back.tobytes() != array.tobytes():
                        failures.append(f"{label}: read back {back.dtype} {back.shape} differs")
        refused = {
            "Fortran-order": np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3)),
            "big-endian": np.arange(4, dtype=">i4"),
            "not supported": np.arange(3, dtype="<u4"),
        }
        for fragment, array in refused.items():
            result, _ = roundtrip(helper, directory, array, (1, 0))
            source = os.path.join(directory, "in.npy")
            if result.returncode != 1 or fragment not in result.stderr or source not in result.stderr:
                failures.append(f"{fragment} array: expected a refusal naming {source}, got "
                                f"{result.returncode}: {result.stderr.strip()}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
