"""et_ops.lowering.attention.fuse_attention, and export_llm using it.

Two decoders with a cache, written in plain PyTorch: GPT-2 style (scores
multiplied by 1/sqrt(d), masked_fill) and the language-model example's
Llama (scores divided by sqrt(d), where, grouped-query attention repeating
each key/value head for two query heads), the latter also with float16
and bfloat16 caches. export_llm fuses each layer's attention into one
et_portable::attention reading the cache in place: no bmm, no transposed,
repeated or widened copy of the cache is left, and the program's
logits agree with the unfused program's (fused_attention=False) to
rounding over a prompt and decode steps, with the same bytes on 1 and 2
threads, and with the PyTorch model.
"""

import collections
import copy
import os
import sys
import tempfile
import unittest

import numpy as np
import torch

import cached_decoders
import harness
import et_ops
import et_ops.export as ex
from et_ops.lowering import attention, rewriting

MAX_SEQ_LEN = 12


def decoders():
    """(name, model, layers, cache dtype)."""
    torch.manual_seed(0)
    yield "gpt2", cached_decoders.GPT2(vocab=48, max_seq_len=MAX_SEQ_LEN, n_layer=2).eval(), 2, torch.float32
    for cache_dtype in (torch.float32, torch.float16, torch.bfloat16):
        torch.manual_seed(1)
        name = "llama" if cache_dtype == torch.float32 else f"llama_{str(cache_dtype).split('.')[1]}"
        yield name, cached_decoders.Llama(vocab_size=48, max_seq_len=MAX_SEQ_LEN, n_layers=2, dim=64, n_heads=4,
                                          n_kv_heads=2, hidden=96, cache_dtype=cache_dtype).eval(), 2, cache_dtype


def run(path, threads):
    """Logits of a 5-token prompt and then 3 decode steps."""
    session = et_ops.load(path).session(threads=threads)
    outputs = [session.run([np.array([[3, 1, 4, 1, 5]], dtype=np.int64), np.arange(5, dtype=np.int64)])[0]]
    for position, token in enumerate((9, 2, 6), start=5):
        outputs.append(session.run([np.array([[token]], dtype=np.int64), np.array([position], dtype=np.int64)])[0])
    return outputs


def reference(model):
    """The same prompt and steps through the PyTorch model (its cache buffers start at zero)."""
    model = copy.deepcopy(model)
    with torch.no_grad():
        outputs = [model(torch.tensor([[3, 1, 4, 1, 5]]), torch.arange(5)).numpy()]
        for position, token in enumerate((9, 2, 6), start=5):
            outputs.append(model(torch.tensor([[token]]), torch.tensor([position])).numpy())
    return outputs


class FuseAttentionTest(unittest.TestCase):
    def test_decoders(self):
        with tempfile.TemporaryDirectory(prefix="et_ops_attention_fusion_") as directory:
            for name, model, layers, cache_dtype in decoders():
                with self.subTest(decoder=name):
                    fused = ex.export_llm(model, max_seq_len=MAX_SEQ_LEN)
                    chain = ex.export_llm(model, max_seq_len=MAX_SEQ_LEN, fused_attention=False)
                    ops = collections.Counter(i["op"] for i in fused._lowered.builder.instructions)
                    chain_ops = collections.Counter(i["op"] for i in chain._lowered.builder.instructions)
                    self.assertEqual(ops[attention.ATTENTION], layers)
                    self.assertEqual(chain_ops[attention.BMM], 2 * layers)
                    self.assertEqual(ops[attention.BMM] + ops[attention.SOFTMAX] + ops[attention.EXPAND_COPY], 0, ops)
                    # Per layer: the key's transposition and the output's; only the output's is left.
                    self.assertEqual(chain_ops[attention.PERMUTE_COPY] - ops[attention.PERMUTE_COPY], layers)
                    # A 16-bit cache: each layer's key and value are rounded to it as they are written
                    # (two copies), and the chain widens the cache back (two more), which the fused
                    # kernel does as it reads.
                    narrow = cache_dtype != torch.float32
                    self.assertEqual(ops[attention.COPY], 2 * layers if narrow else 0, ops)
                    self.assertEqual(chain_ops[attention.COPY], 4 * layers if narrow else 0, chain_ops)
                    values = rewriting.Program(fused._lowered.builder).values
                    caches = [v for v in values if v.get("state") and v.get("dtype") in ("float16", "bfloat16")]
                    self.assertEqual(len(caches), 2 * layers if narrow else 0)
                    paths = {}
                    for kind, program in (("fused", fused), ("chain", chain)):
                        paths[kind] = os.path.join(directory, f"{name}_{kind}.etp")
                        program.save(paths[kind])
                    expected = run(paths["chain"], 1)
                    one, two = run(paths["fused"], 1), run(paths["fused"], 2)
                    for step, (a, b, c) in enumerate(zip(one, two, expected)):
                        self.assertEqual(a.tobytes(), b.tobytes(), f"step {step}: 1 and 2 threads")
                        np.testing.assert_allclose(a, c, rtol=1e-5, atol=1e-5 * float(np.max(np.abs(c))),
                                                   err_msg=f"step {step}")
                    # A 16-bit cache rounds the keys and values PyTorch and the program compute (to
                    # rounding) each on its own: an element near a rounding boundary may round apart.
                    bound = 1e-4 if cache_dtype == torch.float32 else 2e-3
                    for step, (a, b) in enumerate(zip(expected, reference(model))):
                        np.testing.assert_allclose(a, b, rtol=bound, atol=bound * float(np.max(np.abs(b))),
                                                   err_msg=f"step {step}")

    def test_programs_without_attention_unchanged(self):
        model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Softmax(dim=-1)).eval()
        builder = ex.export(model, (torch.randn(2, 8),))._lowered.builder
        self.assertIs(attention.fuse_attention(builder), builder)


if __name__ == "__main__":
    harness.main(os.path.splitext(os.path.basename(sys.argv[0]))[0])
