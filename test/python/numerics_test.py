"""The exporter's numeric contract, under every ATEN_CPU_CAPABILITY this CPU has.

Models nobody here wrote: torchvision's quantizable architectures, built
with random weights (weights=None: nothing is downloaded) and conditioned as
training would (export_contract.condition); and the small custom modules of
export_models. Each is quantized with PyTorch's own flow, exported, and run:
within the numeric contract of the reference quantized model, with weights
kept as integers. A reduced input size keeps the suite fast; the
architectures are the real ones. PyTorch computes the reference, so the
script runs once per capability (test/aten_capabilities.py).
"""

import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.environ["ET_OPS_SOURCE_ROOT"], "test"))
import aten_capabilities  # noqa: E402  (test/aten_capabilities.py)

if __name__ == "__main__" and aten_capabilities.requested() is None:
    sys.exit(aten_capabilities.run_under_each())

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import harness  # noqa: E402
import et_ops  # noqa: E402
import et_ops.export as ex  # noqa: E402

import export_contract  # noqa: E402
import export_models  # noqa: E402

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


def contract_distances(reference, x, program, directory):
    """(measured, allowed) distances of `program` from its reference model on `x`."""
    path = os.path.join(directory, program.name + ".etp")
    program.save(path)
    (output,) = et_ops.load(path).run([x.numpy()])
    with torch.no_grad():
        reference_output = reference(x).numpy()
    step = program.quantization["outputs"][0]["scale"]
    return (export_contract.distance(output, reference_output, step),
            export_contract.bound(reference, (x,), reference_output, step))


class SmallModulesTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_numerics_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def test_every_small_model_runs_within_the_numeric_contract(self):
        aten_capabilities.check_active(torch)
        for name, model_class in export_models.MODELS.items():
            with self.subTest(model=name):
                torch.manual_seed(0)
                model = export_contract.condition(model_class(), model_class.input_shape, 0)
                x = normal(model_class.input_shape, 0)
                calibration = [(normal(model_class.input_shape, 1 + i),) for i in range(4)]
                reference = ex.quantize(model, (x,), calibration)
                measured, allowed = contract_distances(reference, x, ex.export(reference, (x,), name=name),
                                                       self.dir)
                print(f"{name}: {measured}; {allowed}")
                self.assertTrue(allowed.admits(measured), f"{name}: {measured}; {allowed}")


    def test_per_channel_weights(self):
        aten_capabilities.check_active(torch)
        mapping = torch.ao.quantization.get_default_qconfig_mapping("fbgemm")
        torch.manual_seed(3)
        shape = export_models.Residual.input_shape
        model = export_contract.condition(export_models.Residual(), shape)
        x = normal(shape, 0)
        reference = ex.quantize(model, (x,), [(x,)], qconfig_mapping=mapping)
        program = ex.export(reference, (x,))
        self.assertIn("quantized_decomposed::dequantize_per_channel.out", program.operators)
        schemes = {q["scheme"] for q in program.quantization["weights"].values()}
        self.assertEqual(schemes, {"per-channel affine"})
        measured, allowed = contract_distances(reference, x, program, self.dir)
        self.assertTrue(allowed.admits(measured), f"{measured}; {allowed}")


class TorchvisionTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="et_ops_numerics_test_")
        self.addCleanup(shutil.rmtree, self.dir)

    def check(self, name):
        aten_capabilities.check_active(torch)
        build, shape = ARCHITECTURES[name]
        torch.manual_seed(0)
        model = export_contract.condition(build(), shape)
        x = normal(shape, 0)
        reference = ex.quantize(model, (x,), [(normal(shape, 1 + i),) for i in range(3)])
        program = ex.export(reference, (x,), name=name)
        weights = sum(p.numel() for m in reference.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))
                      for p in [m.weight])
        self.assertLess(len(program.to_bytes()), 2 * weights, "weights must be stored as one byte each")
        measured, allowed = contract_distances(reference, x, program, self.dir)
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
    harness.main("python_numerics")
