"""Transformers nobody here wrote, exported float and with each weight scheme.

torchaudio's wav2vec2, PyTorch's nn.TransformerEncoder (its fused eval fast
path, a causal mask, norm_first), decoders in GPT-2 and Llama style
(transformer_models.py), one module with the remaining operators
transformers use (indexing, masks, comparisons, casts), and torchvision's
ShuffleNetV2 in float (its
channel shuffle unpacks ``x.size()``, which torch.fx cannot trace; PyTorch's
own quantization flow stops there, so it is not quantized). Each model is
exported float and with every scheme of ex.quantize_weights, and run from
Python and from the C++ et-ops tool:

- the outputs of both are byte-identical;
- they agree with the reference module in PyTorch: within 1e-3 of the
  largest output in magnitude for float and weight-only schemes, 2e-2 for
  the 8da* schemes (docs/exporting.md, "Numbers for transformers");
- quantized programs hold their linear and embedding weights as integers
  (no float constant of a weight's shape), and an 8da4w decoder is under a
  quarter of the float one's size, and so is an 8da4w encoder.

PyTorch computes the references, so the script runs once per
ATEN_CPU_CAPABILITY (test/aten_capabilities.py). A program that needs an
operator no kernel set registers fails, naming the operators.
"""

import os
import shutil
import subprocess
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
from torch import nn  # noqa: E402

import harness  # noqa: E402
import et_ops  # noqa: E402
import et_ops.export as ex  # noqa: E402
from et_ops import etp, weight_quantization  # noqa: E402

import transformer_models  # noqa: E402

WEIGHT_ONLY_TOLERANCE = 1e-3
DYNAMIC_ACTIVATIONS_TOLERANCE = 2e-2


def shufflenet_v2(seed=0):
    torch.manual_seed(seed)
    model = torchvision.models.quantization.shufflenet_v2_x0_5(weights=None, quantize=False).eval()
    return model, (torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(seed)),)


def tolerance(scheme):
    return DYNAMIC_ACTIVATIONS_TOLERANCE if scheme and scheme.startswith("8da") else WEIGHT_ONLY_TOLERANCE


def weight_shapes(model):
    shapes = set()
    for module in model.modules():
        if isinstance(module, (nn.Linear, nn.Embedding)):
            shapes |= {tuple(module.weight.shape), tuple(module.weight.shape[::-1])}
    return shapes


class TransformersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        aten_capabilities.check_active(torch)
        cls.dir = tempfile.mkdtemp(prefix="et_ops_transformers_test_")
        cls.registered = {r["op"] for r in et_ops.registered_operators()}
        cls.sizes = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def run_both(self, name, program, inputs):
        """(Python outputs, C++ outputs) of `program` on `inputs`."""
        missing = sorted(set(program.operators) - self.registered)
        if missing:
            self.fail(f"{name}: no kernel set registers {', '.join(missing)} (the portable / quantized kernel "
                      "sets must provide every operator the lowering emits)")
        path = os.path.join(self.dir, name + ".etp")
        program.save(path)
        arrays = [i.numpy() for i in inputs]
        python = et_ops.load(path).run(arrays)
        arguments = []
        for index, array in enumerate(arrays):
            input_path = os.path.join(self.dir, f"{name}_input_{index}.npy")
            np.save(input_path, array)
            arguments += ["--input", input_path]
        output_dir = os.path.join(self.dir, name + "_cpp")
        subprocess.run([os.environ["ET_OPS_TOOL"], "run", path, *arguments, "--output-dir", output_dir],
                       check=True, capture_output=True, timeout=300)
        cpp = [np.load(os.path.join(output_dir, f"output_{i}.npy")) for i in range(len(python))]
        return python, cpp

    def check(self, name, factory, scheme):
        model, inputs = factory()
        reference_model = model if scheme is None else ex.quantize_weights(model, scheme)
        with torch.no_grad():
            expected = reference_model(*inputs).numpy()
        program = ex.export(reference_model, inputs, name=f"{name}_{scheme or 'float'}")
        self.sizes[(name, scheme)] = len(program.to_bytes())
        if scheme is not None:
            constants = etp.parse_program(program.to_bytes()).constants.values()
            floats = {tuple(c.shape) for c in constants if c.dtype.kind == "f"}
            self.assertFalse(floats & weight_shapes(model), f"{name} {scheme}: a float copy of a weight")
        (python,), (cpp,) = self.run_both(program.name, program, inputs)
        self.assertEqual(python.tobytes(), cpp.tobytes(), f"{name} {scheme}: C++ and Python outputs differ")
        relative = float(np.abs(python.astype(np.float64) - expected).max() / np.abs(expected).max())
        print(f"{name} {scheme or 'float'}: {relative:.3g} of the largest output from PyTorch's", flush=True)
        self.assertLessEqual(relative, tolerance(scheme), f"{name} {scheme}")

    def check_every_scheme(self, name, factory):
        for scheme in (None,) + ex.SCHEMES:
            with self.subTest(model=name, scheme=scheme or "float"):
                self.check(name, factory, scheme)

    def test_gpt2_style_decoder(self):
        self.check_every_scheme("gpt2", transformer_models.gpt2)
        self.assertLess(self.sizes[("gpt2", "8da4w")], self.sizes[("gpt2", None)] / 4)

    def test_llama_style_decoder(self):
        self.check_every_scheme("llama", transformer_models.llama)
        self.assertLess(self.sizes[("llama", "8da4w")], self.sizes[("llama", None)] / 4)

    def test_transformer_encoder_fast_path(self):
        self.check_every_scheme("encoder", transformer_models.MODELS["encoder"])
        self.assertLess(self.sizes[("encoder", "8da4w")], self.sizes[("encoder", None)] / 4)

    def test_transformer_encoder_with_a_causal_mask(self):
        self.check_every_scheme("encoder_causal", transformer_models.MODELS["encoder_causal"])

    def test_transformer_encoder_norm_first(self):
        self.check_every_scheme("encoder_norm_first", transformer_models.MODELS["encoder_norm_first"])

    def test_wav2vec2(self):
        self.check_every_scheme("wav2vec2", transformer_models.wav2vec2)

    def test_indexing_masks_comparisons_and_casts(self):
        model, inputs = transformer_models.indexing()
        program = ex.export(model, inputs, name="indexing")
        python, cpp = self.run_both("indexing", program, inputs)
        with torch.no_grad():
            expected = [t.numpy() for t in model(*inputs)]
        self.assertEqual(len(python), len(expected))
        for index, (p, c, e) in enumerate(zip(python, cpp, expected)):
            self.assertEqual(p.tobytes(), c.tobytes(), f"output {index}: C++ and Python differ")
            self.assertEqual((p.dtype, p.shape), (e.dtype, e.shape), f"output {index}")
            scale = max(float(np.abs(e).max()), 1e-30)
            self.assertLessEqual(float(np.abs(p.astype(np.float64) - e).max()) / scale, 1e-6, f"output {index}")

    def test_shufflenet_v2_float(self):
        self.check("shufflenet_v2", shufflenet_v2, None)


class QuantizeWeightsTest(unittest.TestCase):
    def test_the_users_model_is_left_alone_and_tied_weights_stay_tied(self):
        model, _ = transformer_models.gpt2()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        quantized = ex.quantize_weights(model, "8da4w")
        for key, value in model.state_dict().items():
            self.assertTrue(torch.equal(value, before[key]), key)
        self.assertIs(quantized.lm_head.quantized, quantized.wte.quantized)
        self.assertEqual(quantized.wte.quantized.integers.dtype, torch.uint8)

    def test_int4_packing_and_dequantization(self):
        weight = torch.randn(4, 64, generator=torch.Generator().manual_seed(1))
        q = weight_quantization.QuantizedWeight(weight, 4, 32)
        integers = weight_quantization.unpack_int4(q.integers)
        self.assertEqual(tuple(q.integers.shape), (4, 32))
        self.assertTrue(bool(((integers >= -8) & (integers <= 7)).all()))
        self.assertTrue(torch.equal(weight_quantization.pack_int4(integers), q.integers))
        self.assertLessEqual(float((q.dequantized() - weight).abs().max()), float(q.scales.max()) / 2 + 1e-7)
        # Element 0 in the high nibble, element 1 in the low nibble, value = nibble - 8.
        packed = weight_quantization.pack_int4(torch.tensor([[-8, 7, 0, -1]]))
        self.assertEqual(packed.tolist(), [[0x0F, 0x87]])

    def test_per_token_numerics_follow_the_reference_contract(self):
        ops = weight_quantization.ops
        x = torch.tensor([[0.0, 0.5, 1.0, -1.0], [0.0, 0.0, 0.0, 0.0]])
        scales, zero_points = ops.choose_qparams_per_token_asymmetric(x, torch.int8)
        self.assertEqual(scales.dtype, torch.float64)
        self.assertEqual(zero_points.tolist(), [[0], [127]])
        self.assertEqual(float(scales[1, 0]), 2.0 ** -23)
        q = ops.quantize_per_token(x, scales, zero_points, -128, 127, torch.int8)
        self.assertEqual(q.dtype, torch.int8)
        back = ops.dequantize_per_token(q, scales, zero_points, -128, 127, torch.int8, torch.float32)
        self.assertLessEqual(float((back - x).abs().max()), float(scales.max()) / 2)

    def test_bad_arguments(self):
        model, _ = transformer_models.gpt2()
        with self.assertRaises(ValueError):
            ex.quantize_weights(model, "int3")
        with self.assertRaises(ValueError):
            ex.quantize_weights(model, "int4", group_size=0)
        with self.assertRaises(ValueError) as caught:
            ex.quantize_weights(nn.Linear(48, 8), "int4", group_size=32)
        self.assertIn("48 columns", str(caught.exception))


if __name__ == "__main__":
    harness.main(f"python_transformers ({aten_capabilities.VARIABLE}={aten_capabilities.requested()})")
