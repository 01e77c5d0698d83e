"""Language models through ex.export_llm, sessions, reset() and et_ops.generate.

Two decoders with key/value caches (cached_decoders.py: GPT-2 style with
the cache written by index assignment, Llama style with grouped-query
attention and the cache written by index_copy_), each exported float and
with every scheme of ex.quantize_weights as one program for every prompt
length from 1 to N:

- the prefill logits of a prompt and the logits of every decode step after
  it agree with the reference module in PyTorch: within 1e-3 of the largest
  logit for float and weight-only schemes, 2e-2 for the 8da* schemes;
- greedy generation gives PyTorch's tokens for as long as PyTorch's top-two
  margin is clearly larger than that;
- reset() gives the same bytes again, and so do 1 and 2 threads;
- et_ops.generate and `et-ops generate` give the same tokens, greedy and
  sampled;
- an 8da4w program is under a quarter of the float one's size;
- bad input (a token id outside the vocabulary or negative, a position at
  or past N, more than N tokens, a prompt that would run past N while
  generating) is an error naming the bound, and the session goes on as if
  the bad run had not happened.

PyTorch computes the references (and the exported integers), so the script
runs once per ATEN_CPU_CAPABILITY (test/aten_capabilities.py); what does not
depend on PyTorch's numerics runs under the first only.
"""

import copy
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

import harness  # noqa: E402
import et_ops  # noqa: E402
import et_ops.export as ex  # noqa: E402
from et_ops import etp  # noqa: E402

import cached_decoders  # noqa: E402

MAX_SEQ_LEN = 24
PROMPT_LENGTH = 6
SCHEMES = (None,) + ex.SCHEMES
WEIGHT_ONLY_TOLERANCE = 1e-3
DYNAMIC_ACTIVATIONS_TOLERANCE = 2e-2
FIRST_CAPABILITY = aten_capabilities.requested() == aten_capabilities.supported()[0]
ERRORS = (et_ops.Error, ValueError)


def tolerance(scheme):
    return DYNAMIC_ACTIVATIONS_TOLERANCE if scheme and scheme.startswith("8da") else WEIGHT_ONLY_TOLERANCE


def decoder(kind, seed=0, vocab=None, **sizes):
    torch.manual_seed(seed)
    if kind == "gpt2":
        return cached_decoders.GPT2(vocab=vocab or 64, max_seq_len=MAX_SEQ_LEN, **sizes).eval()
    sizes = {"dim": 64, "hidden": 128, **sizes}
    if kind != "llama":  # llama_float16, llama_bfloat16: a cache of 16-bit floats
        sizes["cache_dtype"] = getattr(torch, kind.split("_")[1])
    return cached_decoders.Llama(vocab or 80, max_seq_len=MAX_SEQ_LEN, **sizes).eval()


def prompt(vocab, length=PROMPT_LENGTH, seed=1):
    return torch.randint(0, vocab, (length,), generator=torch.Generator().manual_seed(seed)).tolist()


def inputs(tokens, first_position):
    return [np.array([tokens], dtype=np.int64), np.arange(first_position, first_position + len(tokens), dtype=np.int64)]


class Reference:
    """The reference module with its own cache: run(tokens, first_position) -> logits [T, vocab] (float64)."""

    def __init__(self, module):
        self.module = copy.deepcopy(module)

    def run(self, tokens, first_position):
        with torch.no_grad():
            logits = self.module(torch.tensor([tokens]), torch.arange(first_position, first_position + len(tokens)))
        return logits[0].double().numpy()


class Exported:
    """Each decoder's reference module and loaded program, per scheme (exported once per process)."""

    programs = {}
    dir = None

    @classmethod
    def get(cls, kind, scheme):
        if (kind, scheme) not in cls.programs:
            model = decoder(kind)
            reference = model if scheme is None else ex.quantize_weights(model, scheme)
            program = ex.export_llm(reference, max_seq_len=MAX_SEQ_LEN, name=f"{kind}_{scheme or 'float'}")
            path = os.path.join(cls.dir, program.name + ".etp")
            program.save(path)
            cls.programs[(kind, scheme)] = (reference, et_ops.load(path))
        return cls.programs[(kind, scheme)]


def setUpModule():
    aten_capabilities.check_active(torch)
    Exported.dir = tempfile.mkdtemp(prefix="et_ops_language_model_test_")


def tearDownModule():
    shutil.rmtree(Exported.dir)


def relative_error(actual, expected):
    return float(np.abs(actual.astype(np.float64) - expected).max() / np.abs(expected).max())


class NumbersTest(unittest.TestCase):
    """Prefill and every decode step against the reference module; greedy tokens against PyTorch's."""

    def check_steps(self, kind, scheme):
        reference_module, program = Exported.get(kind, scheme)
        vocab = program.metadata["vocab_size"]
        reference, session = Reference(reference_module), program.session(threads=1)
        tokens, position, worst = prompt(vocab), 0, 0.0
        while position + len(tokens) <= MAX_SEQ_LEN:
            expected = reference.run(tokens, position)
            (logits,) = session.run(inputs(tokens, position))
            self.assertEqual(logits.shape, (1, len(tokens), vocab))
            error = relative_error(logits[0], expected)
            worst = max(worst, error)
            self.assertLessEqual(error, tolerance(scheme), f"{kind} {scheme}: T={len(tokens)} at {position}")
            position += len(tokens)
            tokens = [int(np.argmax(expected[-1]))]  # both continue with PyTorch's choice
        print(f"{kind} {scheme or 'float'}: prefill and {MAX_SEQ_LEN - PROMPT_LENGTH} decode steps within "
              f"{worst:.3g} of the largest logit", flush=True)

    def check_greedy(self, kind, scheme, prompts=4):
        """et_ops.generate's tokens are PyTorch's until PyTorch's top-two margin is within twice the tolerance."""
        reference_module, program = Exported.get(kind, scheme)
        compared = 0
        for seed in range(prompts):
            tokens = prompt(program.metadata["vocab_size"], seed=seed)
            new_tokens = MAX_SEQ_LEN - len(tokens)
            generated = [int(t) for t in et_ops.generate(program, tokens, new_tokens)]
            self.assertEqual(len(generated), new_tokens)
            reference, expected, position, step_tokens = Reference(reference_module), [], 0, tokens
            for _ in range(new_tokens):
                logits = reference.run(step_tokens, position)[-1]
                top_two = np.sort(logits)[-2:]
                if top_two[1] - top_two[0] <= 2 * tolerance(scheme) * np.abs(logits).max():
                    break  # too close to call for a program within tolerance: later tokens may differ
                expected.append(int(np.argmax(logits)))
                position += len(step_tokens)
                step_tokens = expected[-1:]
            self.assertEqual(generated[:len(expected)], expected, f"{kind} {scheme} prompt {seed}")
            compared += len(expected)
        print(f"{kind} {scheme or 'float'}: {compared} greedy tokens of {prompts} prompts compared, equal", flush=True)
        self.assertGreater(compared, 0, f"{kind} {scheme}: no clear choice in any prompt")

    def test_gpt2_style_every_scheme(self):
        for scheme in SCHEMES:
            with self.subTest(scheme=scheme or "float"):
                self.check_steps("gpt2", scheme)
                self.check_greedy("gpt2", scheme)

    def test_llama_style_every_scheme(self):
        for scheme in SCHEMES:
            with self.subTest(scheme=scheme or "float"):
                self.check_steps("llama", scheme)
                self.check_greedy("llama", scheme)

    def test_llama_with_a_16_bit_cache(self):
        """The cache rounded to float16 or bfloat16 as PyTorch's module rounds it: the same contract."""
        for kind in ("llama_float16", "llama_bfloat16"):
            for scheme in (None, "8da4w"):
                with self.subTest(kind=kind, scheme=scheme or "float"):
                    self.check_steps(kind, scheme)
                    self.check_greedy(kind, scheme)

    def test_the_program_declares_its_bounds(self):
        for kind in ("gpt2", "llama"):
            _, program = Exported.get(kind, "8da4w")
            parsed = etp.read_program(program.path)
            self.assertEqual(parsed.symbols, [{"name": "T", "min": 1, "max": MAX_SEQ_LEN}])
            self.assertEqual(program.metadata["max_seq_len"], MAX_SEQ_LEN)
            self.assertEqual([parsed.describe_value(i) for i in parsed.inputs], ["int64[1, T]", "int64[T]"])
            # the caches, one key and one value buffer per layer, and nothing else
            caches = [parsed.values[i]["sizes"] for i in parsed.state]
            self.assertEqual(len(caches), 4)
            self.assertTrue(all(sizes[2] == MAX_SEQ_LEN for sizes in caches), caches)


class RunStateTest(unittest.TestCase):
    """What does not depend on PyTorch's numerics: reset, threads, front ends, sizes, bad input."""

    def steps(self, session, tokens):
        """Prefill `tokens`, then three decode steps: the logits' bytes of each run."""
        outputs = [session.run(inputs(tokens, 0))[0].tobytes()]
        for step in range(3):
            outputs.append(session.run(inputs([step + 1], len(tokens) + step))[0].tobytes())
        return outputs

    def test_state_is_kept_between_runs_and_reset_restores_it(self):
        for kind in ("gpt2", "llama"):
            _, program = Exported.get(kind, "8da4w")
            tokens = prompt(program.metadata["vocab_size"], length=12)
            # One token at position 10 attends to positions 0..10 of the cache: zeros in a fresh
            # session, the prompt's keys and values after a prefill of 12 tokens.
            lone = program.session(threads=1).run(inputs([3], 10))[0].tobytes()
            session = program.session(threads=1)
            first = self.steps(session, tokens)
            self.assertNotEqual(session.run(inputs([3], 10))[0].tobytes(), lone, f"{kind}: the cache was not kept")
            session.reset()
            self.assertEqual(session.run(inputs([3], 10))[0].tobytes(), lone, f"{kind}: reset() left state")
            session.reset()
            self.assertEqual(self.steps(session, tokens), first, kind)

    def test_one_and_two_threads_give_the_same_bytes(self):
        for kind in ("gpt2", "llama"):
            _, program = Exported.get(kind, "8da4w")
            tokens = prompt(program.metadata["vocab_size"], length=MAX_SEQ_LEN - 3)
            self.assertEqual(self.steps(program.session(threads=2), tokens),
                             self.steps(program.session(threads=1), tokens), kind)

    def test_python_and_the_command_line_give_the_same_tokens(self):
        for kind in ("gpt2", "llama"):
            _, program = Exported.get(kind, "int4")
            tokens = prompt(program.metadata["vocab_size"], length=5)
            for sampling in ({}, {"temperature": 0.8, "top_k": 10, "seed": 7}, {"temperature": 1.5, "seed": 3}):
                python = [int(t) for t in et_ops.generate(program, tokens, 12, threads=2, **sampling)]
                arguments = [f"--{key.replace('_', '-')}={value}" for key, value in sampling.items()]
                run = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", program.path, "--prompt-tokens",
                                      ",".join(map(str, tokens)), "--max-new-tokens", "12", *arguments],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(run.returncode, 0, run.stderr)
                line = next(l for l in run.stdout.splitlines() if l.startswith("new tokens:"))
                cli = [int(t) for t in line.split(":", 1)[1].split(",")]
                self.assertEqual(python, cli, f"{kind} {sampling}")

    def test_an_8da4w_program_is_under_a_quarter_of_the_float_one(self):
        sizes = {}
        for kind, dims in (("gpt2", {"n_embd": 256, "vocab": 512}), ("llama", {"dim": 256, "hidden": 512,
                                                                               "vocab": 512})):
            model = decoder(kind, **dims)
            for scheme in (None, "8da4w"):
                program = ex.export_llm(model, max_seq_len=MAX_SEQ_LEN, scheme=scheme)
                sizes[kind, scheme] = len(program.to_bytes())
            print(f"{kind} (dimension 256): float {sizes[kind, None]} bytes, 8da4w {sizes[kind, '8da4w']} bytes",
                  flush=True)
            self.assertLess(sizes[kind, "8da4w"], sizes[kind, None] / 4, kind)

    def assert_refused(self, call, *fragments):
        with self.assertRaises(ERRORS) as caught:
            call()
        message = str(caught.exception)
        for fragment in fragments:
            self.assertIn(fragment, message)
        return message

    def test_bad_input_is_an_error_and_the_session_goes_on(self):
        for kind in ("gpt2", "llama"):
            _, program = Exported.get(kind, "8da4w")
            vocab = program.metadata["vocab_size"]
            tokens = prompt(vocab)
            expected = self.steps(program.session(threads=1), tokens)
            session = program.session(threads=1)
            outputs = [session.run(inputs(tokens, 0))[0].tobytes()]
            bad_runs = (
                (inputs([vocab], len(tokens)), str(vocab)),  # token id outside the vocabulary
                (inputs([-1], len(tokens)), "-1"),  # negative token id
                (inputs([1], MAX_SEQ_LEN), str(MAX_SEQ_LEN)),  # position at N
                (inputs([1], MAX_SEQ_LEN + 5), str(MAX_SEQ_LEN + 5)),  # position past N
                (inputs([1] * (MAX_SEQ_LEN + 1), 0), str(MAX_SEQ_LEN)),  # more than N tokens
            )
            for index, (arrays, fragment) in enumerate(bad_runs):
                with self.subTest(kind=kind, bad_run=index):
                    self.assert_refused(lambda: session.run(arrays), fragment)
            for step in range(3):
                outputs.append(session.run(inputs([step + 1], len(tokens) + step))[0].tobytes())
            self.assertEqual(outputs, expected, f"{kind}: the bad runs changed the session's state")
            # generate: the same bounds, checked before anything runs
            self.assert_refused(lambda: et_ops.generate(program, [vocab], 2), str(vocab))
            self.assert_refused(lambda: et_ops.generate(program, [-3], 2), "-3")
            self.assert_refused(lambda: et_ops.generate(program, [1] * (MAX_SEQ_LEN + 1), 1), str(MAX_SEQ_LEN))
            self.assert_refused(lambda: et_ops.generate(program, tokens, MAX_SEQ_LEN - len(tokens) + 1),
                                str(MAX_SEQ_LEN))
            self.assertEqual(len(et_ops.generate(program, tokens, MAX_SEQ_LEN - len(tokens))),
                             MAX_SEQ_LEN - len(tokens))


if not FIRST_CAPABILITY:  # (a skipped test counts as a failure: harness.py)
    del RunStateTest


class ExportTest(unittest.TestCase):
    def test_shapes_that_are_not_affine_in_t_are_refused(self):
        class Quadratic(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.embedding = torch.nn.Embedding(8, 4)

            def forward(self, tokens, input_pos):
                x = self.embedding(tokens)  # [1, T, 4]
                first = x[..., 0]  # [1, T]
                outer = (first.unsqueeze(-1) * first.unsqueeze(-2)).reshape(1, -1)  # [1, T*T]
                return x * outer[:, :x.shape[1]].unsqueeze(-1)

        with self.assertRaises(ValueError) as caught:
            ex.export_llm(Quadratic(), max_seq_len=16)
        self.assertIn("not of the form a*T+b", str(caught.exception))

    def test_a_partial_write_of_a_buffer_is_reported(self):
        model = decoder("gpt2")

        class LayerCache(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = model
                self.register_buffer("stacked", torch.zeros(2, MAX_SEQ_LEN))

            def forward(self, tokens, input_pos):
                self.stacked[0].index_copy_(0, input_pos, input_pos.float())
                return self.inner(tokens, input_pos) + self.stacked.sum()

        with self.assertRaises(ex.UnsupportedError) as caught:
            ex.export_llm(LayerCache(), max_seq_len=MAX_SEQ_LEN)
        self.assertIn("'stacked' in place through a view of part of it", str(caught.exception))

    def test_the_users_model_and_its_caches_are_left_alone(self):
        model = decoder("llama")
        tensors = lambda: [*model.named_parameters(), *model.named_buffers()]  # noqa: E731 (caches are not in state_dict)
        before = {name: value.clone() for name, value in tensors()}
        program = ex.export_llm(model, max_seq_len=MAX_SEQ_LEN)
        for name, value in tensors():
            self.assertTrue(torch.equal(value, before[name]), name)
        parsed = etp.parse_program(program.to_bytes())
        for index in parsed.state:  # the caches start from the buffers' values: zeros
            self.assertFalse(parsed.constants[index].any())

    def test_bad_max_seq_len(self):
        for bad in (0, 3, 2.5, True):
            with self.assertRaises(ValueError):
                ex.export_llm(decoder("gpt2"), max_seq_len=bad)


if __name__ == "__main__":
    harness.main(f"python_language_model ({aten_capabilities.VARIABLE}={aten_capabilities.requested()})")
