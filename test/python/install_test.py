"""The installed Python package: complete, importable, and finding its libraries.

Installs the build into a scratch directory (meson install --destdir), then
imports et_ops from there in a child process without LD_LIBRARY_PATH: the
installed extension must find the installed libet_ops.so and kernel
libraries through its run path (relative to itself, so the moved prefix
works), and run an example program. Also checks that the build tree's
package and the installed one hold every module of python/et_ops, and that
`python3 -m et_ops` names the installed prefix's SDK directories (the build
tree's package has none and says so).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import harness

BUILD_ROOT = os.environ["ET_OPS_BUILD_ROOT"]


def python_modules(directory):
    """The .py files under `directory`, as paths relative to it."""
    return sorted(os.path.relpath(os.path.join(root, f), directory)
                  for root, _, files in os.walk(directory) for f in files if f.endswith(".py"))


PYTHON_MODULES = python_modules(harness.source_path("python", "et_ops"))
# Modules the build writes: the SDK's layout, and the dtype and operator tables.
GENERATED_MODULES = ["_sdk_layout.py", "_dtypes.py", "_operators.py"]


def installed_package_dir():
    """Where meson installs the et_ops package (from the build's introspection data)."""
    with open(os.path.join(BUILD_ROOT, "meson-info", "intro-installed.json"), encoding="utf-8") as f:
        installed = json.load(f)
    extension = [dest for source, dest in installed.items() if os.path.basename(source).startswith("_et_ops.")]
    assert len(extension) == 1, extension
    return os.path.dirname(extension[0])


class InstalledPackageTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.destdir = tempfile.mkdtemp(prefix="et_ops_install_test_")
        subprocess.run([os.environ["ET_OPS_MESON"], "install", "-C", BUILD_ROOT, "--destdir", cls.destdir,
                        "--no-rebuild", "--quiet"], check=True, capture_output=True, timeout=300)
        cls.package_dir = cls.destdir + installed_package_dir()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.destdir)

    def test_build_tree_package_holds_every_module(self):
        package = os.path.join(os.environ["PYTHONPATH"], "et_ops")
        for name in PYTHON_MODULES:
            self.assertTrue(os.path.isfile(os.path.join(package, name)), name)

    def test_installed_package_holds_every_module_and_the_extension(self):
        files = os.listdir(self.package_dir)
        self.assertEqual(python_modules(self.package_dir), sorted(PYTHON_MODULES + GENERATED_MODULES))
        self.assertEqual(len([f for f in files if f.startswith("_et_ops.") and f.endswith(".so")]), 1)

    def test_installed_package_runs_with_the_installed_libraries(self):
        code = f"""
import numpy as np
import et_ops
assert et_ops.__file__.startswith({self.destdir!r}), et_ops.__file__
libraries = {{r["library"] for r in et_ops.registered_operators()}}
assert libraries and all(path.startswith({self.destdir!r}) for path in libraries), libraries
program = et_ops.load({harness.source_path("examples", "qmlp", "qmlp.etp")!r})
(output,) = program.run([np.load({harness.source_path("examples", "qmlp", "qmlp_input_0.npy")!r})])
print(output.shape)
"""
        env = {key: value for key, value in os.environ.items() if key != "LD_LIBRARY_PATH"}
        env["PYTHONPATH"] = os.path.dirname(self.package_dir)
        child = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                               timeout=120)
        self.assertEqual(child.returncode, 0, child.stderr)
        self.assertEqual(child.stdout.strip(), "(4, 8)")

    def run_module(self, *args, installed=True):
        """python3 -m et_ops ARGS with the installed package (or the build tree's) on the path."""
        env = {key: value for key, value in os.environ.items() if key != "LD_LIBRARY_PATH"}
        if installed:
            env["PYTHONPATH"] = os.path.dirname(self.package_dir)
        return subprocess.run([sys.executable, "-m", "et_ops", *args], env=env, capture_output=True, text=True,
                              timeout=120)

    def test_module_names_the_installed_prefixs_sdk(self):
        with open(os.path.join(BUILD_ROOT, "meson-info", "intro-buildoptions.json"), encoding="utf-8") as f:
            options = {option["name"]: option["value"] for option in json.load(f)}
        prefix = self.destdir + options["prefix"]
        child = self.run_module("--includes", "--libdir", "--pkgconfigdir", "--cmakedir", "--version")
        self.assertEqual(child.returncode, 0, child.stderr)
        libdir = os.path.join(prefix, options["libdir"])
        self.assertEqual(child.stdout.splitlines(), [
            os.path.join(prefix, options["includedir"]), libdir, os.path.join(libdir, "pkgconfig"),
            os.path.join(libdir, "cmake", "et_ops"), harness.project_version()])
        self.assertTrue(os.path.isfile(os.path.join(prefix, options["includedir"], "et_ops", "registry.h")))

    def test_module_in_the_build_tree_has_no_sdk_and_says_so(self):
        child = self.run_module("--includes", installed=False)
        self.assertEqual(child.returncode, 1, child.stdout + child.stderr)
        self.assertIn("is a build tree's and has no C++ SDK", child.stderr)
        version = self.run_module("--version", installed=False)
        self.assertEqual((version.returncode, version.stdout.strip()), (0, harness.project_version()))

    def test_module_usage_errors(self):
        for args in ([], ["--include"], ["--libdir", "extra"]):
            with self.subTest(args=args):
                child = self.run_module(*args)
                self.assertEqual(child.returncode, 2, child.stdout + child.stderr)
                self.assertIn("usage: python3 -m et_ops", child.stderr)
        child = self.run_module("--help")
        self.assertEqual(child.returncode, 0, child.stderr)
        for flag in ("--includes", "--libdir", "--pkgconfigdir", "--cmakedir", "--version"):
            self.assertIn(flag, child.stdout)

    def test_package_installs_where_the_interpreter_looks_under_the_prefix(self):
        with open(os.path.join(BUILD_ROOT, "meson-info", "intro-buildoptions.json"), encoding="utf-8") as f:
            options = {option["name"]: option["value"] for option in json.load(f)}
        site = os.path.dirname(installed_package_dir())
        if options["python.platlibdir"]:  # the user's choice wins
            self.assertEqual(site, os.path.normpath(options["python.platlibdir"]))
            return
        prefix = os.path.normpath(options["prefix"])
        searched = [os.path.normpath(p) for p in sys.path if p and os.path.basename(p) in ("site-packages", "dist-packages")]
        under_prefix = [p for p in searched if os.path.relpath(p, prefix).startswith("lib")]
        if under_prefix:
            self.assertEqual(site, under_prefix[0])
        else:  # a prefix the interpreter never searches: Meson's site directory under it
            self.assertTrue(site.startswith(prefix + os.sep), site)


if __name__ == "__main__":
    harness.main("python_install")
