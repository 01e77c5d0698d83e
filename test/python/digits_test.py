"""The main job (examples/digits, scripts/demo.sh) at reduced size: fewer epochs, the same pipeline.

The digits model is trained, quantized and exported, and the held-out
digits are classified by PyTorch, `et-ops run --batch` (both backends, 1
and 2 threads) and the C++ application built from
examples/digits/classify.cpp. A wrong program cannot reach the bounds: 90 %
of the held-out digits right (a tenth is chance), and every et_ops row
within one image of PyTorch's own quantized model. Bad images and labels
given to the demo's helpers are errors that say what was expected.
"""

import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch

import harness

sys.path.insert(0, harness.source_path("examples"))
from digits import data, model, pipeline  # noqa: E402  (examples/digits)

EPOCHS = 2  # the demo trains 5; 2 already reach the bounds
MIN_ACCURACY = 0.90
MAX_DIFFERENCES = 1


class PipelineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="et_ops_digits_test_")
        cls.results = pipeline.run(cls.dir, os.environ["ET_OPS_TOOL"], os.environ["ET_OPS_DIGITS_CLASSIFY"],
                                   epochs=EPOCHS, log=lambda message: None)
        print(cls.results.table())

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_every_row(self):
        names = [row.name for row in self.results.rows]
        for prefix in ("PyTorch float", "PyTorch quantized", "et_ops reference, 1 thread (et-ops run)",
                       "et_ops xnnpack, 1 thread (et-ops run)", "et_ops xnnpack, 2 threads (et-ops run)",
                       "et_ops reference, 1 thread (C++ classify)", "et_ops xnnpack, 1 thread (C++ classify)"):
            self.assertTrue(any(name.startswith(prefix) for name in names), f"no row {prefix!r} in {names}")

    def test_accuracy(self):
        test_labels = self.results.test_labels
        for row in self.results.rows:
            accuracy = float(np.mean(row.labels == test_labels))
            self.assertGreaterEqual(accuracy, MIN_ACCURACY, f"{row.name}: {accuracy:.3f} of the held-out digits")
            self.assertGreater(row.seconds, 0, row.name)

    def test_et_ops_agrees_with_pytorch_quantized(self):
        quantized = self.results.row(pipeline.PYTORCH_QUANTIZED)
        for row in self.results.rows:
            if row.name.startswith("et_ops"):
                differences = int(np.sum(row.labels != quantized.labels))
                self.assertLessEqual(differences, MAX_DIFFERENCES, f"{row.name} vs {quantized.name}")
        self.assertEqual(self.results.failures(MIN_ACCURACY, MAX_DIFFERENCES), [])

    def test_failures_name_the_row(self):
        wrong = pipeline.Results([pipeline.Row(row.name, (row.labels + 1) % 10 if row.name.startswith("et_ops reference")
                                               else row.labels, row.seconds) for row in self.results.rows],
                                 self.results.test_labels)
        failures = wrong.failures(MIN_ACCURACY, MAX_DIFFERENCES)
        self.assertEqual(len(failures), 4, failures)  # two reference rows, accuracy and differences each
        self.assertTrue(all(f.startswith("et_ops reference, 1 thread") for f in failures), failures)

    def test_files(self):
        for what, path in self.results.files.items():
            self.assertTrue(os.path.isfile(path) and os.path.getsize(path) > 0, f"{what}: {path}")
        with open(self.results.files["chart"], "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        self.assertIn("| model | accuracy |", self.results.table())


class TrainingTest(unittest.TestCase):
    def test_deterministic(self):
        split = data.load_split()
        images, labels = split.train_images[:300], split.train_labels[:300]
        first, second = (model.train(images, labels, epochs=1).state_dict() for _ in range(2))
        for name in first:
            self.assertTrue(torch.equal(first[name], second[name]), name)

    def test_split(self):
        split = data.load_split()
        self.assertEqual((len(split.train_labels), len(split.test_labels)), (1438, 359))
        self.assertEqual(split.test_images.shape[1:], (1, 8, 8))


class BadDataTest(unittest.TestCase):
    IMAGES = np.zeros((3, 1, 8, 8), np.float32)

    def assert_error(self, fragment, function, *args):
        with self.assertRaises(data.DigitsDataError) as caught:
            function(*args)
        self.assertIn(fragment, str(caught.exception))

    def test_images(self):
        self.assert_error("dtype float64, expected float32", data.check_images, self.IMAGES.astype(np.float64))
        self.assert_error("shape [3, 8, 8], expected [N, 1, 8, 8]", data.check_images, self.IMAGES[:, 0])
        self.assert_error("shape [0, 1, 8, 8]", data.check_images, self.IMAGES[:0])
        self.assert_error("expected a numpy array, got list", data.check_images, self.IMAGES.tolist())
        self.assert_error("pixels must lie in [0, 1]", data.check_images, self.IMAGES + np.float32(2))
        self.assert_error("pixels must lie in [0, 1]", data.check_images, self.IMAGES * np.float32("nan"))

    def test_labels(self):
        self.assert_error("dtype float32, expected integers", data.check_labels, np.zeros(3, np.float32), 3)
        self.assert_error("shape [2], expected [3] (one label per image)", data.check_labels, np.zeros(2, int), 3)
        self.assert_error("shape [3, 1], expected [3]", data.check_labels, np.zeros((3, 1), int), 3)
        self.assert_error("values from 0 to 10, expected 0 to 9", data.check_labels, np.array([0, 10, 1]), 3)

    def test_scores(self):
        self.assert_error("shape [3, 9], expected [3, 10]", data.labels_from_scores, np.zeros((3, 9), np.float32), 3)
        self.assert_error("dtype int64, expected floating point", data.labels_from_scores, np.zeros((3, 10), int), 3)
        self.assertEqual(data.labels_from_scores(np.eye(10, dtype=np.float32)[[4, 2]][:, None], 2).tolist(), [4, 2])

    def test_training_data(self):
        self.assert_error("training labels: shape [2], expected [3]", model.train, self.IMAGES, np.zeros(2, int))
        self.assert_error("training images: dtype uint8", model.train, self.IMAGES.astype(np.uint8), np.zeros(3, int))

    def test_files(self):
        with tempfile.NamedTemporaryFile(suffix=".npy") as f:
            f.write(b"not an array")
            f.flush()
            self.assert_error(f"labels: {f.name}: not a readable .npy file", data.load_array, f.name, "labels")


if __name__ == "__main__":
    harness.main("digits")
