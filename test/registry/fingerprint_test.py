#!/usr/bin/env python3
"""scripts/fingerprint.py: two builds of the same sources agree wherever
they are checked out; editing a source or a numerics setting changes it."""
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPT, SOURCE_DIR = sys.argv[1], sys.argv[2]
SOURCES = ["test_kernels.cpp", "test_kernels_modified.cpp"]


def digest(directory, settings="gcc 12 opt=3"):
    out = os.path.join(directory, "fp.h")
    subprocess.run([sys.executable, SCRIPT, "--macro", "FP", "--settings", settings, "--output", out]
                   + [os.path.join(directory, s) for s in SOURCES], check=True)
    with open(out) as f:
        return f.read().split('"')[1]


def checkout(root, name):
    directory = os.path.join(root, name)
    os.makedirs(directory)
    for s in SOURCES:
        shutil.copy(os.path.join(SOURCE_DIR, s), directory)
    return directory


with tempfile.TemporaryDirectory() as root:
    first, second = checkout(root, "one"), checkout(root, "two")
    base = digest(first)
    assert len(base) == 64, base
    assert digest(second) == base, "two checkouts of the same sources must agree"
    assert digest(second, "gcc 12 opt=2") != base, "a numerics setting must change the fingerprint"
    with open(os.path.join(second, "test_kernels.cpp"), "a") as f:
        f.write("\n// edited\n")
    assert digest(second) != base, "editing a kernel source must change the fingerprint"
print("fingerprint: 4 passed, 0 failed")
