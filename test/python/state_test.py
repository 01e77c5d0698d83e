"""Program state, bounded dynamic shapes, sessions and et_ops.generate.

The program is a small bigram-like language model written with
et_ops.etp: logits[t] = table[tokens[t]] (an int8 embedding with scale 0.1)
+ bias, where bias is state that grows by `step` every run, and the state
`last_pos` records each run's last position. Its reference is plain numpy.
Tokens from Python (the library's generate) and from `et-ops generate`
must be equal, and `et-ops generate --profile` traces every run, labelled
prefill or decode; the C++ tests (test/runtime/program_state_test.cpp,
generate_test.cpp) check the same model against the same reference.
"""

import json
import os
import re
import subprocess
import tempfile
import unittest

import numpy as np

import harness
import et_ops
from et_ops.etp import ProgramBuilder, Sym, read_program

VOCAB = 8
MAX_SEQ_LEN = 16
RNG = np.random.default_rng(7)
TABLE = RNG.integers(-100, 100, size=(VOCAB, VOCAB), dtype=np.int8)
STEP = (0.75 * (np.arange(VOCAB) % 3)).astype(np.float32).reshape(1, 1, VOCAB)


def language_model(path):
    b = ProgramBuilder("bigram")
    t = b.symbol("T", 1, MAX_SEQ_LEN)
    tokens = b.tensor("int64", [1, t])
    positions = b.tensor("int64", [t])
    table = b.constant(TABLE)
    scales = b.constant(np.full(VOCAB, 0.1, np.float32))
    bias = b.state(np.zeros((1, 1, VOCAB), np.float32))
    step = b.constant(STEP)
    last_pos = b.state(np.array([-1], np.int64))
    embedded = b.tensor("float32", [1, t, VOCAB])
    logits = b.tensor("float32", [1, t, VOCAB])
    one = b.integer(1)
    b.input(tokens)
    b.input(positions)
    b.output(logits)
    b.output(last_pos)
    b.instruction("quantized_decomposed::embedding_byte.out",
                  [table, scales, b.none(), b.integer(-128), b.integer(127), tokens, embedded])
    b.instruction("aten::add.out", [bias, step, one, bias])
    b.instruction("aten::add.out", [embedded, bias, one, logits])
    b.instruction("aten::slice_copy.Tensor_out",
                  [positions, b.integer(0), b.integer(Sym("T", add=-1)), b.integer(Sym("T")), one, last_pos])
    b.write(path)
    return path


def reference_logits(token, runs):
    bias = np.zeros(VOCAB, np.float32)
    for _ in range(runs):
        bias += STEP.reshape(-1)
    return TABLE[token].astype(np.float32) * np.float32(0.1) + bias


def reference_greedy(prompt, count):
    tokens, last = [], prompt[-1]
    for i in range(count):
        last = int(np.argmax(reference_logits(last, i + 1)))
        tokens.append(last)
    return tokens


def inputs(tokens, first_position=0):
    return [np.array([tokens], np.int64), np.arange(first_position, first_position + len(tokens), dtype=np.int64)]


class StateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.path = language_model(os.path.join(cls.dir.name, "bigram.etp"))
        cls.program = et_ops.load(cls.path)

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def test_file_is_version_2_with_state_and_symbols(self):
        f = read_program(self.path)
        self.assertEqual(f.version, 2)
        self.assertEqual(f.symbols, [{"name": "T", "min": 1, "max": MAX_SEQ_LEN}])
        self.assertEqual(len(f.state), 2)
        self.assertEqual(f.describe_value(f.inputs[0]), "int64[1, T]")
        self.assertEqual(self.program.state_count, 2)
        self.assertEqual(self.program.input_bounds[0], [(1, 1), (1, MAX_SEQ_LEN)])

    def test_programs_without_state_or_symbols_stay_version_1(self):
        b = ProgramBuilder("plain")
        x = b.tensor("float32", [2])
        b.input(x)
        b.output(x)
        data = b.to_bytes()
        self.assertEqual(data[4:8], (1).to_bytes(4, "little"))
        self.assertIn(b'"version":1', data)

    def test_session_keeps_state_and_reset_restores_it(self):
        session = self.program.session()
        first = session.run(inputs([3, 5, 1]))
        self.assertEqual(first[0].shape, (1, 3, VOCAB))
        self.assertEqual(first[1].tolist(), [2])
        np.testing.assert_array_equal(first[0][0, -1], reference_logits(1, 1))
        second = session.run(inputs([4], 3))
        self.assertEqual(second[1].tolist(), [3])
        np.testing.assert_array_equal(second[0][0, 0], reference_logits(4, 2))
        session.reset()
        again = session.run(inputs([3, 5, 1]))
        self.assertEqual(again[0].tobytes(), first[0].tobytes())
        other = self.program.session(threads=2)
        self.assertEqual(other.run(inputs([3, 5, 1]))[0].tobytes(), first[0].tobytes())
        self.assertNotEqual(session.run(inputs([4], 3))[0].tobytes(), session.run(inputs([4], 3))[0].tobytes())

    def test_bounds_are_checked_and_the_session_stays_usable(self):
        session = self.program.session()
        with self.assertRaises(et_ops.InputError) as caught:
            session.run([np.zeros((1, MAX_SEQ_LEN + 1), np.int64), np.zeros(MAX_SEQ_LEN + 1, np.int64)])
        self.assertIn("expected shape (1, 1..16), got (1, 17)", str(caught.exception))
        with self.assertRaises(et_ops.RunError) as caught:
            session.run([np.zeros((1, 3), np.int64), np.zeros(2, np.int64)])
        self.assertIn("input 1 dimension 0 is 2, but input 0 dimension 1 makes T = 3", str(caught.exception))
        with self.assertRaises(et_ops.RunError) as caught:
            session.run(inputs([VOCAB]))
        self.assertIn("indices[0] = 8 is out of range for a weight of 8 rows", str(caught.exception))
        np.testing.assert_array_equal(session.run(inputs([2]))[0][0, 0], reference_logits(2, 1))

    def test_generate_greedy_sampled_and_threads(self):
        prompt = [3, 5, 1]
        greedy = et_ops.generate(self.program, prompt, 10)
        self.assertEqual(greedy, reference_greedy(prompt, 10))
        self.assertEqual(greedy.prefill_tokens, 3)
        self.assertEqual(greedy.decode_tokens, 9)
        self.assertGreater(greedy.decode_tokens_per_second, 0)
        self.assertEqual(et_ops.generate(self.program, prompt, 10, threads=2), greedy)
        sampled = et_ops.generate(self.program, prompt, 10, temperature=0.8, top_k=3, seed=42)
        self.assertEqual(et_ops.generate(self.program, prompt, 10, temperature=0.8, top_k=3, seed=42), sampled)
        self.assertEqual(et_ops.generate(self.program, prompt, 10, temperature=0.8, top_k=1, seed=5), greedy)
        stop = greedy[4]
        self.assertEqual(et_ops.generate(self.program, prompt, 10, stop_tokens=[stop]),
                         greedy[:greedy.index(stop) + 1])

    def test_generate_refuses_bad_input(self):
        for prompt, max_new, fragment in [
            ([1, VOCAB], 4, "prompt_tokens[1] is 8, outside the vocabulary: token ids are 0 to 7"),
            ([-1], 4, "prompt_tokens[0] is -1, outside the vocabulary"),
            ([1] * (MAX_SEQ_LEN + 1), 1, "prompt_tokens has 17 tokens, more than the program's max_seq_len of 16"),
            ([1] * 13, 4, "a prompt of 13 tokens plus max_new_tokens 4 runs past the program's max_seq_len of 16"),
        ]:
            with self.assertRaises(et_ops.InputError) as caught:
                et_ops.generate(self.program, prompt, max_new)
            self.assertIn(fragment, str(caught.exception))
        self.assertEqual(et_ops.generate(self.program, [3, 5], MAX_SEQ_LEN - 2),
                         reference_greedy([3, 5], MAX_SEQ_LEN - 2))

    def test_command_line_gives_the_same_tokens(self):
        for extra, kwargs in [([], {}), (["--temperature", "0.8", "--top-k", "3", "--seed", "42"],
                                         {"temperature": 0.8, "top_k": 3, "seed": 42})]:
            result = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", self.path, "--prompt-tokens", "3,5,1",
                                     "--max-new-tokens", "10", "--threads", "2"] + extra,
                                    capture_output=True, text=True, check=False)
            self.assertEqual(result.returncode, 0, result.stderr)
            printed = re.search(r"^new tokens: (.*)$", result.stdout, re.M).group(1)
            self.assertEqual([int(t) for t in printed.split(",")],
                             et_ops.generate(self.program, [3, 5, 1], 10, **kwargs))
            self.assertRegex(result.stdout, r"prefill: 3 tokens in [0-9.]+ ms, [0-9.]+ tokens/s")
            self.assertRegex(result.stdout, r"decode: 9 tokens in [0-9.]+ ms, [0-9.]+ tokens/s")
        result = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", self.path, "--prompt-tokens", "3,5",
                                 "--max-new-tokens", "0"], capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("new tokens: \nprefill: not run (no new tokens were asked for)\ndecode: not run\n", result.stdout)
        result = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", self.path, "--prompt-tokens", "1,9"],
                                capture_output=True, text=True, check=False)
        self.assertEqual(result.returncode, 1)
        self.assertIn("prompt_tokens[1] is 9, outside the vocabulary", result.stderr)
        result = subprocess.run([os.environ["ET_OPS_TOOL"], "inspect", self.path], capture_output=True, text=True,
                                check=True)
        self.assertIn("symbols: T in [1, 16]", result.stdout)
        self.assertIn("state: 2 tensor(s), 40 bytes", result.stdout)
        self.assertIn("%0 int64 [1, T] dim_order [0, 1]", result.stdout)

    def test_command_line_profile_of_prefill_and_decode(self):
        trace = os.path.join(self.dir.name, "generate_trace.json")
        result = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", self.path, "--prompt-tokens", "3,5,1",
                                 "--max-new-tokens", "4", "--profile", trace], capture_output=True, text=True,
                                check=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        printed = re.search(r"^new tokens: (.*)$", result.stdout, re.M).group(1)
        self.assertEqual([int(t) for t in printed.split(",")], et_ops.generate(self.program, [3, 5, 1], 4))
        with open(trace, encoding="utf-8") as f:
            events = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        # 4 instructions; the prefill run (run 0), then 3 decode runs (the prefill chose the first new token).
        self.assertEqual([(e["args"]["run"], e["args"]["phase"], e["args"]["instruction"]) for e in events],
                         [(run, "prefill" if run == 0 else "decode", i) for run in range(4) for i in range(4)])
        self.assertEqual(events[0]["name"], "quantized_decomposed::embedding_byte.out")
        # Each run's own sizes: the embedding's tokens and output for T = 3 (the prompt), then T = 1.
        self.assertEqual(events[0]["args"]["shapes"][2:], [[1, 3], [1, 3, VOCAB]])
        self.assertEqual(events[4]["args"]["shapes"][2:], [[1, 1], [1, 1, VOCAB]])
        self.assertTrue(all(e["dur"] >= 0 for e in events))
        starts = [e["ts"] for e in events]
        self.assertEqual(starts, sorted(starts))
        # The summary: one table for the prefill, one for the decode steps.
        summary = result.stdout.split(f"profile: wrote {trace} (16 events)\n", 1)[1]
        prefill, decode = summary.split("decode: 3 runs\n")
        self.assertTrue(prefill.startswith("prefill: 1 run\noperator"), prefill)
        self.assertTrue(decode.startswith("operator"), decode)
        for table, runs in ((prefill, 1), (decode, 3)):
            self.assertRegex(table, rf"aten::add.out +kernels_portable +{2 * runs} +[0-9.]+ +[0-9.]+ +[0-9.]+%")
            self.assertRegex(table, rf"quantized_decomposed::embedding_byte.out +kernels_quantized +{runs} ")
            self.assertRegex(table, rf"\ntotal +{4 * runs} +[0-9.]+\n")
        unwritable = os.path.join(self.dir.name, "no_such_directory", "trace.json")
        result = subprocess.run([os.environ["ET_OPS_TOOL"], "generate", self.path, "--prompt-tokens", "3,5,1",
                                 "--max-new-tokens", "4", "--profile", unwritable], capture_output=True, text=True,
                                check=False)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertIn(f"et-ops: {unwritable}: cannot write the profile: No such file or directory", result.stderr)


if __name__ == "__main__":
    harness.main("python_state")
