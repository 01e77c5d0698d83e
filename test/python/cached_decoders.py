"""Decoders with a key/value cache, written the common ways in plain PyTorch, tiny.

Both take tokens int64 [1, T] and input_pos int64 [T] and return logits
[1, T, vocab]; their caches are buffers of max_seq_len positions that
forward writes in place, and attention reads the whole cache with a causal
mask indexed by input_pos.

- `GPT2`: fused qkv, LayerNorm, tanh GELU, learned positions, tied
  embeddings; the cache is written by index assignment (``cache[:, :, pos] = k``).
- `Llama`: RMSNorm, rotary embeddings (rotate-half form), grouped-query
  attention, SwiGLU, an untied output layer; the cache is written by
  ``index_copy_``.
"""

import math

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


# ---- Llama style ----

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def _rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, max_seq_len):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        shape = (1, n_kv_heads, max_seq_len, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(shape))
        self.register_buffer("v_cache", torch.zeros(shape))

    def _repeated(self, cache):
        """[1, kv, N, D] -> [1, heads, N, D]: each key/value head serves heads / kv query heads."""
        b, kv, n, d = cache.shape
        repeats = self.n_heads // kv
        return cache[:, :, None].expand(b, kv, repeats, n, d).reshape(b, kv * repeats, n, d)

    def forward(self, x, input_pos, cos, sin, mask):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + _rotate_half(q) * sin
        k = k * cos + _rotate_half(k) * sin
        self.k_cache.index_copy_(2, input_pos, k)
        self.v_cache.index_copy_(2, input_pos, v)
        keys, values = self._repeated(self.k_cache), self._repeated(self.v_cache)
        scores = torch.matmul(q, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~mask, float("-inf"))
        out = torch.matmul(F.softmax(scores.float(), dim=-1), values)
        return self.wo(out.transpose(1, 2).reshape(B, T, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden, max_seq_len):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = LlamaAttention(dim, n_heads, n_kv_heads, max_seq_len)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(dim, hidden)

    def forward(self, x, input_pos, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), input_pos, cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=80, max_seq_len=24, n_layers=2, dim=64, n_heads=4, n_kv_heads=2, hidden=128,
                 rope_theta=10000.0):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([LlamaBlock(dim, n_heads, n_kv_heads, hidden, max_seq_len)
                                     for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        head_dim = dim // n_heads
        inverse = 1.0 / rope_theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(max_seq_len).float(), inverse)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("rope_cos", angles.cos())
        self.register_buffer("rope_sin", angles.sin())
        self.register_buffer("mask", _causal_mask(max_seq_len))

    def forward(self, tokens, input_pos):
        x = self.tok_embeddings(tokens)
        cos, sin, mask = self.rope_cos[input_pos], self.rope_sin[input_pos], self.mask[input_pos]
        for layer in self.layers:
            x = layer(x, input_pos, cos, sin, mask)
        return self.output(self.norm(x))
