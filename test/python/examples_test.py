"""The example programs checked in under examples/ cannot go stale.

examples/qmlp and examples/qcnn hold what `python3 -m et_ops.export` writes
for the two models. A fresh export must reproduce them byte for byte, and
the checked-in program must run within one output step of its checked-in
reference.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np

import harness
import et_ops

EXAMPLES = {"mlp": "qmlp", "cnn": "qcnn"}


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

    def test_checked_in_files_equal_a_fresh_export(self):
        for model, name in EXAMPLES.items():
            fresh_dir = os.path.join(self.dir, name)
            subprocess.run([sys.executable, "-m", "et_ops.export", "--model", model, "--output-dir", fresh_dir],
                           check=True, capture_output=True, timeout=300)
            checked_in = files_of(harness.source_path("examples", name))
            fresh = files_of(fresh_dir)
            how_to_fix = (f"examples/{name} is stale; regenerate it with: "
                          f"/usr/bin/python3 -m et_ops.export --model {model} --output-dir examples/{name}")
            self.assertEqual(sorted(checked_in), sorted(fresh), how_to_fix)
            for file_name, data in fresh.items():
                self.assertTrue(checked_in[file_name] == data, f"{file_name} differs. {how_to_fix}")

    def test_checked_in_programs_run_within_one_output_step(self):
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
            self.assertLessEqual(worst, step)


if __name__ == "__main__":
    harness.main("python_examples")
