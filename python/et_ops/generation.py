"""Generating tokens with a language-model program: ``et_ops.generate``.

The program takes ``tokens`` int64 [1, T] and ``input_pos`` int64 [T] and
returns ``logits`` float32 [1, T, vocab], with T from 1 to max_seq_len and
its cache in state. The loop, the checks and the
sampling are the C++ library's (et_ops/generate.h), so Python, C++ and
``et-ops generate`` give the same tokens.
"""

from . import _et_ops
from .errors import InputError, RunError


class Generation(list):
    """The new token ids (a list), with the run's speed.

    Attributes: prefill_tokens, prefill_seconds, decode_tokens,
    decode_seconds, prefill_tokens_per_second, decode_tokens_per_second.
    """

    def __init__(self, outcome):
        super().__init__(outcome["tokens"])
        self.prefill_tokens = outcome["prefill_tokens"]
        self.prefill_seconds = outcome["prefill_seconds"]
        self.decode_tokens = outcome["decode_tokens"]
        self.decode_seconds = outcome["decode_seconds"]

    @property
    def prefill_tokens_per_second(self):
        return self.prefill_tokens / self.prefill_seconds if self.prefill_seconds > 0 else 0.0

    @property
    def decode_tokens_per_second(self):
        return self.decode_tokens / self.decode_seconds if self.decode_seconds > 0 else 0.0


def _int(name, value, minimum):
    if isinstance(value, bool) or not hasattr(value, "__index__") or int(value) < minimum:
        raise InputError(f"{name} must be an int of at least {minimum}, got {value!r}")
    return int(value)


def _token_list(name, tokens):
    try:
        return [int(t) for t in tokens]
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a sequence of int token ids, got {tokens!r}") from None


def generate(program, prompt_tokens, max_new_tokens, temperature=0.0, top_k=None, seed=None, threads=1,
             stop_tokens=()):
    """Generates up to `max_new_tokens` tokens after `prompt_tokens`; returns the new ids (a ``Generation``).

    A fresh session runs the prompt in one run (prefill), then one run per
    new token (decode). temperature 0 is greedy (the lowest id among equal
    logits); above 0, tokens are sampled among all ids or the `top_k` most
    likely, with the random source seeded by `seed` (None means 0), so the
    same arguments always give the same tokens. Generation stops after a
    token in `stop_tokens` (which is returned). Bad input (a token id
    outside the vocabulary, a prompt longer than max_seq_len, a prompt plus
    max_new_tokens past it) raises InputError naming the input and the bound;
    a failing run raises RunError.
    """
    prompt = _token_list("prompt_tokens", prompt_tokens)
    stops = _token_list("stop_tokens", stop_tokens)
    max_new_tokens = _int("max_new_tokens", max_new_tokens, 0)
    top_k = 0 if top_k is None else _int("top_k", top_k, 1)
    seed = 0 if seed is None else _int("seed", seed, 0)
    threads = _int("threads", threads, 1)
    try:
        temperature = float(temperature)
    except (TypeError, ValueError):
        raise InputError(f"temperature must be a number, got {temperature!r}") from None
    if any(not -2**63 <= t < 2**63 for t in prompt + stops) or seed >= 2**64:
        raise InputError("token ids must fit in int64 and seed in uint64")
    outcome = _et_ops.generate(program._native, prompt, max_new_tokens, temperature, top_k, seed, threads, stops)
    if not outcome["ok"]:
        error = f"program '{program.name}' ({program.path}): {outcome['error']}"
        raise RunError(error) if outcome["code"] in ("kernel_failed", "no_memory") else InputError(error)
    return Generation(outcome)
