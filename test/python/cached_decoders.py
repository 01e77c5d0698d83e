"""Decoders with a key/value cache in plain PyTorch, tiny.

Both take tokens int64 [1, T] and input_pos int64 [T] and return logits
[1, T, vocab]; their caches are buffers of max_seq_len positions that
forward writes in place, and attention reads the whole cache with a causal
mask indexed by input_pos.

- `GPT2`: fused qkv, LayerNorm, tanh GELU, learned positions, tied
  embeddings; the cache is written by index assignment (``cache[:, :, pos] = k``).
- `Llama`: the language-model example's (examples/language_model/model.py):
  RMSNorm, rotary embeddings (rotate-half form), grouped-query attention,
  SwiGLU, an untied output layer; the cache is written by ``index_copy_``.
"""

import importlib.util
import math
import os

import torch
from torch import nn
from torch.nn import functional as F


def _causal_mask(max_seq_len):
    return torch.tril(torch.ones(max_seq_len, max_seq_len, dtype=torch.bool))


# ---- GPT-2 style ----

class GPT2Attention(nn.Module):
    def __init__(self, n_embd, n_head, max_seq_len):
        super().__init__()
        self.n_head, self.head_dim = n_head, n_embd // n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("k_cache", torch.zeros(1, n_head, max_seq_len, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, n_head, max_seq_len, self.head_dim))
        self.register_buffer("mask", _causal_mask(max_seq_len))

    def forward(self, x, input_pos):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        k = k.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        v = v.view(B, T, self.n_head, self.head_dim).transpose(1, 2)
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        att = (q @ self.k_cache.transpose(-2, -1)) * (1.0 / math.sqrt(self.head_dim))
        att = att.masked_fill(~self.mask[input_pos], float("-inf"))
        y = F.softmax(att, dim=-1) @ self.v_cache
        return self.c_proj(y.transpose(1, 2).contiguous().view(B, T, C))


class GPT2Block(nn.Module):
    def __init__(self, n_embd, n_head, max_seq_len):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = GPT2Attention(n_embd, n_head, max_seq_len)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x, input_pos):
        x = x + self.attn(self.ln_1(x), input_pos)
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=64, max_seq_len=24, n_layer=2, n_head=4, n_embd=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(max_seq_len, n_embd)
        self.h = nn.ModuleList([GPT2Block(n_embd, n_head, max_seq_len) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, tokens, input_pos):
        x = self.wte(tokens) + self.wpe(input_pos)
        for block in self.h:
            x = block(x, input_pos)
        return self.lm_head(self.ln_f(x))


def _example_model():
    path = os.path.join(os.environ["ET_OPS_SOURCE_ROOT"], "examples", "language_model", "model.py")
    spec = importlib.util.spec_from_file_location("language_model_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Llama = _example_model().Llama
