"""Models nobody here wrote: torchvision's quantizable architectures.

Built with random weights (weights=None: nothing is downloaded) and
conditioned as training would (export_contract.condition), quantized with
PyTorch's own flow, exported, and run: within the numeric contract of the
reference quantized model, with their weights kept as integers. A reduced
input size keeps the suite fast; the architectures are the real ones.
"""

import os
import shutil
import tempfile
import unittest

import numpy as np
import torch
import torchvision

import harness
import et_ops
import et_ops.export as ex

import export_contract

QUANTIZABLE = torchvision.models.quantization

ARCHITECTURES = {
    "resnet18": (lambda: QUANTIZABLE.resnet18(weights=None, quantize=False), (1, 3, 64, 64)),
    "mobilenet_v2": (lambda: QUANTIZABLE.mobilenet_v2(weights=None, quantize=False), (1, 3, 64, 64)),
    "mobilenet_v3_large": (lambda: QUANTIZABLE.mobilenet_v3_large(weights=None, quantize=False), (1, 3, 64, 64)),
    "googlenet": (lambda: QUANTIZABLE.googlenet(weights=None, quantize=False, aux_logits=False,
                                                init_weights=False), (1, 3, 64, 64)),
}


def normal(shape, seed):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


class TorchvisionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_torchvision_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def check(self, name):
        build, shape = ARCHITECTURES[name]
        torch.manual_seed(0)
        model = export_contract.condition(build(), shape)
        x = normal(shape, 0)
        reference = ex.quantize(model, (x,), [(normal(shape, 1 + i),) for i in range(3)])
        program = ex.export(reference, (x,), name=name)
        weights = sum(p.numel() for m in reference.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))
                      for p in [m.weight])
        self.assertLess(len(program.to_bytes()), 2 * weights, "weights must be stored as one byte each")
        path = os.path.join(self.dir, name + ".etp")
        program.save(path)
        (output,) = et_ops.load(path).run([x.numpy()])
        with torch.no_grad():
            reference_output = reference(x).numpy()
        step = program.quantization["outputs"][0]["scale"]
        measured = export_contract.distance(output, reference_output, step)
        allowed = export_contract.bound(reference, (x,), reference_output, step)
        print(f"{name} {list(shape)}: {measured}; {allowed}")
        self.assertTrue(allowed.admits(measured), f"{name}: {measured}; {allowed}")

    def test_resnet18(self):
        self.check("resnet18")

    def test_mobilenet_v2(self):
        self.check("mobilenet_v2")

    def test_mobilenet_v3_large(self):
        self.check("mobilenet_v3_large")

    def test_googlenet(self):
        self.check("googlenet")


if __name__ == "__main__":
    harness.main("python_torchvision")
