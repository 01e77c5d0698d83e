"""et_ops.lowering.lowbit.fuse_linears on quantize_weights'd programs, and export_llm using it.

A small multi-layer perceptron on a batch of token sequences, exported
with each weight scheme, then fused: every linear layer becomes one of the
quantized set's low-bit linears (no aten::linear.out, no weight dequantize,
no per-token chain left for the 8da* schemes), the rest of the program is
the same instructions, and the fused program's outputs agree with the
unfused one's within the documented bounds (docs/kernels-quantized.md,
"Fusing exported programs") on 1 and 2 threads, the same bytes on both.
export_llm fuses a quantized decoder's linears by default (state, dynamic
shapes and all) and keeps the reference chain with lowbit_linears=False.
"""

import collections
import os
import shutil
import sys
import tempfile
import unittest

import numpy as np
import torch
from torch import nn

import cached_decoders
import harness
import et_ops
import et_ops.export as ex
from et_ops.lowering import lowbit

# Of the largest output in magnitude: float summation order for the
# weight-only schemes; one int8 step of a re-rounded activation for 8da*.
TOLERANCE = {"int8": 1e-5, "int4": 1e-5, "8da8w": 2e-2, "8da4w": 2e-2}
FUSED = {"int8": lowbit.LINEAR_INT8, "int4": lowbit.LINEAR_INT4, "8da8w": lowbit.LINEAR_8DA8W,
         "8da4w": lowbit.LINEAR_8DA4W}
CHAIN = {lowbit.LINEAR, lowbit.DEQUANTIZE_GROUP_4BIT, lowbit.DEQUANTIZE_PER_CHANNEL, lowbit.CHOOSE_QPARAMS_PER_TOKEN,
         lowbit.QUANTIZE_PER_TOKEN, lowbit.DEQUANTIZE_PER_TOKEN}


def perceptron(seed=0):
    """Linear layers with and without bias, on [batch, tokens, features] inputs."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(96, 160), nn.ReLU(), nn.Linear(160, 64, bias=False), nn.ReLU(),
                          nn.Linear(64, 40)).eval()
    return model, (torch.randn(2, 5, 96, generator=torch.Generator().manual_seed(seed)),)


class FuseLinearsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="et_ops_lowbit_fusion_test_")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def run_builder(self, builder, name, inputs, threads=1):
        path = os.path.join(self.dir, name + ".etp")
        builder.write(path)
        return et_ops.load(path).run(inputs, threads=threads)

    def test_each_scheme(self):
        model, example = perceptron()
        linears = sum(1 for m in model.modules() if type(m).__name__ == "Linear")
        inputs = [e.numpy() for e in example]
        for scheme in ex.SCHEMES:
            with self.subTest(scheme=scheme):
                exported = ex.export(ex.quantize_weights(model, scheme, group_size=32), example)
                builder = exported._lowered.builder
                fused = lowbit.fuse_linears(builder)
                before = collections.Counter(i["op"] for i in builder.instructions)
                after = collections.Counter(i["op"] for i in fused.instructions)
                self.assertEqual(after[FUSED[scheme]], linears)
                self.assertFalse(CHAIN & set(after), after)
                # The 8da* operators read the flattened float input: one view_copy each moves before them.
                self.assertEqual({op: n for op, n in before.items() if op not in CHAIN},
                                 {op: n for op, n in after.items() if op != FUSED[scheme]})
                reference = self.run_builder(builder, scheme + "_unfused", inputs)[0]
                one = self.run_builder(fused, scheme + "_fused", inputs)[0]
                two = self.run_builder(fused, scheme + "_fused", inputs, threads=2)[0]
                self.assertEqual(one.tobytes(), two.tobytes())
                error = float(np.max(np.abs(one - reference)))
                scale = float(np.max(np.abs(reference)))
                self.assertLessEqual(error, TOLERANCE[scheme] * scale, f"{scheme}: {error} of {scale}")

    def test_other_programs_unchanged(self):
        model, example = perceptron()
        builder = ex.export(model, example)._lowered.builder
        self.assertEqual(lowbit.fuse_linears(builder).to_bytes(), builder.to_bytes())


class ExportLlmTest(unittest.TestCase):
    MAX_SEQ_LEN = 12

    def test_fused_by_default_and_chain_on_request(self):
        torch.manual_seed(0)
        model = cached_decoders.GPT2(vocab=48, max_seq_len=self.MAX_SEQ_LEN, n_layer=1).eval()
        linears = sum(1 for m in model.modules() if isinstance(m, nn.Linear))
        model = ex.quantize_weights(model, "8da4w")
        fused = ex.export_llm(model, max_seq_len=self.MAX_SEQ_LEN)
        chain = ex.export_llm(model, max_seq_len=self.MAX_SEQ_LEN, lowbit_linears=False)
        self.assertIn(lowbit.LINEAR_8DA4W, fused.operators)
        fused_ops = collections.Counter(i["op"] for i in fused._lowered.builder.instructions)
        chain_ops = collections.Counter(i["op"] for i in chain._lowered.builder.instructions)
        self.assertEqual(fused_ops[lowbit.LINEAR_8DA4W], linears)
        self.assertEqual(fused_ops[lowbit.LINEAR] + linears, chain_ops[lowbit.LINEAR])
        self.assertFalse({lowbit.DEQUANTIZE_GROUP_4BIT, lowbit.QUANTIZE_PER_TOKEN} & set(fused_ops))
        self.assertEqual(chain_ops[lowbit.LINEAR_8DA4W], 0)
        tokens = np.array([[3, 1, 4, 1, 5]], dtype=np.int64)
        runs = {}
        with tempfile.TemporaryDirectory(prefix="et_ops_lowbit_llm_") as directory:
            for name, program in (("fused", fused), ("chain", chain)):
                path = os.path.join(directory, name + ".etp")
                program.save(path)
                loaded = et_ops.load(path)
                for threads in (1, 2):
                    session = loaded.session(threads=threads)
                    prefill, = session.run([tokens, np.arange(5, dtype=np.int64)])
                    decode, = session.run([np.array([[2]], dtype=np.int64), np.array([5], dtype=np.int64)])
                    runs[name, threads] = (prefill, decode)
        for step in range(2):
            self.assertEqual(runs["fused", 1][step].tobytes(), runs["fused", 2][step].tobytes())
            reference = runs["chain", 1][step]
            error = float(np.max(np.abs(runs["fused", 1][step] - reference)))
            self.assertLessEqual(error, TOLERANCE["8da4w"] * float(np.max(np.abs(reference))))


if __name__ == "__main__":
    harness.main(os.path.splitext(os.path.basename(sys.argv[0]))[0])
