"""The example programs checked in under examples/ cannot go stale.

examples/qmlp and examples/qcnn hold what `python3 -m et_ops.export` writes
for the two models. A fresh export must reproduce them byte for byte on
every x86-64 machine, and the checked-in program must run within 3 output
steps (the exporter's floor, docs/exporting.md) of its checked-in reference,
the reference quantized model's output.

Every machine: PyTorch picks its kernels by instruction set
(ATEN_CPU_CAPABILITY), and glibc binds FMA variants of its math functions
on CPUs with FMA, so the export runs once per capability this CPU supports
plus `default` (what a machine without AVX2 runs), and once more as if the
CPU had no FMA. PyTorch's float matrix products run on whatever BLAS
libblas.so.3 is, so the export also runs once with each BLAS this machine
has as the process's BLAS (its directory first on LD_LIBRARY_PATH, as the
system's `libblas.so.3` alternative would pick it): every run must give
the checked-in bytes. A BLAS forced in with LD_PRELOAD, which the exporter
cannot undo, is refused with an error rather than giving other bytes.
"""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest

import numpy as np

import harness
import et_ops

sys.path.insert(0, harness.source_path("test"))
import aten_capabilities  # noqa: E402  (test/aten_capabilities.py)

EXAMPLES = {"mlp": "qmlp", "cnn": "qcnn"}


#: The BLAS libraries Debian offers as libblas.so.3: name -> directory under /usr/lib/<multiarch>.
BLAS_CHOICES = {"reference BLAS (libblas3)": ("blas", "lapack"), "OpenBLAS (libopenblas0-pthread)": ("openblas-pthread",)}


def blas_directories(choice):
    return [os.path.join("/usr/lib", sysconfig.get_config_var("MULTIARCH"), d) for d in BLAS_CHOICES[choice]]


def blas_environments():
    """(description, environment overrides) making each installed BLAS the process's libblas.so.3."""
    environments = []
    for choice in BLAS_CHOICES:
        directories = blas_directories(choice)
        if os.path.exists(os.path.join(directories[0], "libblas.so.3")):
            path = ":".join(directories)
            rest = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]  # the build's libraries
            environments.append((f"LD_LIBRARY_PATH={path} ({choice})", {"LD_LIBRARY_PATH": ":".join([path] + rest)}))
    return environments


def export_environments():
    """(description, environment overrides) of every way the export is run."""
    environments = [(f"ATEN_CPU_CAPABILITY={c}", {"ATEN_CPU_CAPABILITY": c}) for c in aten_capabilities.supported()]
    no_fma = "glibc.cpu.hwcaps=-AVX2,-FMA"
    environments.append((f"GLIBC_TUNABLES={no_fma} (libm as on a CPU without FMA)", {"GLIBC_TUNABLES": no_fma}))
    return environments + blas_environments()


def files_of(directory):
    contents = {}
    for name in sorted(os.listdir(directory)):
        with open(os.path.join(directory, name), "rb") as f:
            contents[name] = f.read()
    return contents


class CheckedInExamplesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_examples_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def export(self, model, directory, environment, options=()):
        env = dict(os.environ)
        env.update(environment)
        subprocess.run([sys.executable, "-m", "et_ops.export", "--model", model, "--output-dir", directory,
                        *options], check=True, capture_output=True, timeout=300, env=env)
        return files_of(directory)

    def test_the_xnnpack_backend_exports_the_same_bytes_under_every_cpu_capability(self):
        environments = export_environments()
        first = None
        for index, (description, environment) in enumerate(environments):
            with self.subTest(environment=description):
                fresh = self.export("cnn", os.path.join(self.dir, f"xnnpack_{index}"), environment,
                                    ("--backend", "xnnpack"))
                self.assertIn(b"et_xnnpack::conv2d.out", fresh["qcnn.etp"])
                if first is None:
                    first = (description, fresh)
                for file_name, data in fresh.items():
                    self.assertTrue(first[1][file_name] == data, f"{file_name} differs under {description} "
                                    f"from the export under {first[0]}")

    def test_checked_in_files_equal_a_fresh_export_under_every_cpu_capability(self):
        environments = export_environments()
        self.assertGreaterEqual(len(environments), 2)
        for model, name in EXAMPLES.items():
            checked_in = files_of(harness.source_path("examples", name))
            how_to_fix = (f"examples/{name} is stale; regenerate it with: "
                          f"/usr/bin/python3 -m et_ops.export --model {model} --output-dir examples/{name}")
            for index, (description, environment) in enumerate(environments):
                with self.subTest(model=model, environment=description):
                    fresh = self.export(model, os.path.join(self.dir, f"{name}_{index}"), environment)
                    self.assertEqual(sorted(checked_in), sorted(fresh), how_to_fix)
                    for file_name, data in fresh.items():
                        self.assertTrue(checked_in[file_name] == data,
                                        f"{file_name} differs under {description}. {how_to_fix}")

    def test_both_blas_libraries_are_installed(self):
        # CI installs both (scripts/install-deps.sh), so both are exercised above.
        self.assertEqual(len(blas_environments()), len(BLAS_CHOICES), blas_environments())

    def test_a_preloaded_openblas_is_refused_rather_than_exporting_other_bytes(self):
        openblas = os.path.join(blas_directories("OpenBLAS (libopenblas0-pthread)")[0], "libblas.so.3")
        # After what the environment preloads already (the sanitizer build's runtimes, which must come first).
        env = dict(os.environ, LD_PRELOAD=" ".join(filter(None, [os.environ.get("LD_PRELOAD"), openblas])))
        result = subprocess.run([sys.executable, "-m", "et_ops.export", "--model", "mlp", "--output-dir",
                                 os.path.join(self.dir, "preloaded")], capture_output=True, text=True, timeout=300,
                                env=env)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("not only Debian's reference BLAS and LAPACK", result.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "preloaded")))

    def test_checked_in_programs_run_within_three_output_steps(self):
        for name in EXAMPLES.values():
            directory = harness.source_path("examples", name)
            program = et_ops.load(os.path.join(directory, name + ".etp"))
            example = np.load(os.path.join(directory, name + "_input_0.npy"))
            reference = np.load(os.path.join(directory, name + "_reference.npy"))
            with open(os.path.join(directory, name + "_quantization.json"), encoding="utf-8") as f:
                step = json.load(f)["tolerance"]["output_step"]
            (output,) = program.run([example])
            worst = float(np.abs(output.astype(np.float64) - reference).max())
            print(f"{name}: worst difference {worst:.6g} = {worst / step:.3f} output steps")
            self.assertLessEqual(worst, 3 * step)


if __name__ == "__main__":
    harness.main("python_examples")
