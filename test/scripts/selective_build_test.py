"""A selective build of the kernel libraries for the MLP example (examples/qmlp).

Configures a build directory of its own (BUILD-selective-qmlp, beside the
full build BUILD) with -Dselected_programs=qmlp.etp,
builds the kernel libraries and et-ops only, and checks that:
- et-ops runs the example to its reference output;
- a program needing an operator the selection left out fails to load with
  a message saying it was left out of this build and how to add it;
- the stripped kernel libraries are at most a fifth of the full build's
  (docs/writing-kernels.md gives the sizes; the SIMD loops the four kernels
  keep, for every target and dtype, are most of it);
- the unselected kernels' entry points are neither declared nor exported;
- installed, it serves the example consumer (examples/consumer) through
  pkg-config and through CMake unchanged, and the consumer runs the MLP.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.environ["ET_OPS_SOURCE_ROOT"]
FULL = os.environ["ET_OPS_BUILD_ROOT"]
# Beside the full build, at the same depth below the source root: the same
# compile commands for the files the selection does not change (the SIMD
# kernels), which a compiler cache (ccache) then serves from the full build's.
BUILD = os.path.normpath(FULL) + "-selective-qmlp"
MESON = os.environ.get("ET_OPS_MESON", "meson")
SETS = ("portable", "quantized", "xnnpack")


def stripped_size(path):
    with tempfile.TemporaryDirectory() as directory:
        copy = os.path.join(directory, "lib.so")
        subprocess.run(["strip", "-o", copy, path], check=True)
        return os.path.getsize(copy)


def library(build, name):
    return os.path.join(build, "src", "kernels", f"libet_kernels_{name}.so")


class SelectiveBuild(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(os.path.join(BUILD, "build.ninja")):
            subprocess.run([MESON, "setup", BUILD, ROOT, "-Dselected_programs=examples/qmlp/qmlp.etp",
                            "-Dtests=false", "-Dbenchmarks=false", "-Dpython=false", "-Dwerror=true",
                            f"-Dpython_interpreter={sys.executable}"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["ninja", "-C", BUILD, "tools/et-ops"], check=True, stdout=subprocess.DEVNULL)
        cls.tool = os.path.join(BUILD, "tools", "et-ops")
        # The tool finds its own build's libraries through its run path; the test
        # environment's LD_LIBRARY_PATH names the full build's and would win.
        cls.env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}

    def test_runs_the_example(self):
        example = os.path.join(ROOT, "examples", "qmlp")
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([self.tool, "run", os.path.join(example, "qmlp.etp"), "--input",
                            os.path.join(example, "qmlp_input_0.npy"), "--output-dir", out], check=True,
                           stdout=subprocess.DEVNULL, env=self.env)
            np.testing.assert_array_equal(np.load(os.path.join(out, "output_0.npy")),
                                          np.load(os.path.join(example, "qmlp_reference.npy")))

    def test_a_left_out_operator_is_named(self):
        result = subprocess.run([self.tool, "doctor", os.path.join(ROOT, "examples", "qcnn", "qcnn.etp")],
                                capture_output=True, text=True, env=self.env)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("aten::convolution.out  (left out of this build of component kernels_portable", result.stdout)
        self.assertIn("-Dselected_operators", result.stdout)

    def test_at_most_a_fifth_of_the_size(self):
        full = sum(stripped_size(library(FULL, name)) for name in SETS)
        selected = sum(stripped_size(library(BUILD, name)) for name in SETS)
        print(f"kernel libraries, stripped: all operators {full} bytes, the MLP's {selected} bytes", file=sys.stderr)
        self.assertLessEqual(selected * 5, full)

    def run_consumer(self, binary, out):
        example = os.path.join(ROOT, "examples", "qmlp")
        subprocess.run([binary, os.path.join(example, "qmlp.etp"), os.path.join(example, "qmlp_input_0.npy"), out],
                       check=True, stdout=subprocess.DEVNULL, env=self.env)
        np.testing.assert_array_equal(np.load(out), np.load(os.path.join(example, "qmlp_reference.npy")))

    def test_consumers_build_unchanged(self):
        with tempfile.TemporaryDirectory() as work:
            root = os.path.join(work, "root")
            subprocess.run([MESON, "install", "-C", BUILD, "--destdir", root, "--quiet"], check=True,
                           stdout=subprocess.DEVNULL)
            prefix = os.path.join(root, "usr", "local")
            [pkgconfig] = [d for d, _, files in os.walk(prefix) if "et-kernels-quantized.pc" in files]
            for name in ("pkgconfig", "cmake"):
                shutil.copytree(os.path.join(ROOT, "examples", "consumer"), os.path.join(work, name))
            env = dict(self.env, PKG_CONFIG_PATH=pkgconfig)
            subprocess.run(["make", "-s", "-C", os.path.join(work, "pkgconfig")], check=True, env=env,
                           stdout=subprocess.DEVNULL)
            self.run_consumer(os.path.join(work, "pkgconfig", "consumer"), os.path.join(work, "pkgconfig.npy"))
            cmake = os.path.join(work, "cmake")
            subprocess.run(["cmake", "-S", cmake, "-B", os.path.join(cmake, "build"), f"-DCMAKE_PREFIX_PATH={prefix}"],
                           check=True, env=self.env, stdout=subprocess.DEVNULL)
            subprocess.run(["cmake", "--build", os.path.join(cmake, "build")], check=True, env=self.env,
                           stdout=subprocess.DEVNULL)
            self.run_consumer(os.path.join(cmake, "build", "consumer"), os.path.join(work, "cmake.npy"))

    def test_unselected_kernels_are_not_exported(self):
        symbols = subprocess.run(["nm", "-D", "--defined-only", "-C", library(BUILD, "portable")],
                                 capture_output=True, text=True, check=True).stdout
        self.assertIn("et_ops::kernels::portable::relu_out", symbols)
        self.assertNotIn("et_ops::kernels::portable::convolution_out", symbols)
        with open(os.path.join(BUILD, "include", "et_ops", "kernels", "portable_operators.h")) as f:
            header = f.read()
        self.assertIn("bool linear_out(", header)
        self.assertNotIn("bool convolution_out(", header)


if __name__ == "__main__":
    unittest.main()
