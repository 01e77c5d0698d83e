"""A small Llama-style language model in plain PyTorch.

RMSNorm, rotary position embeddings, grouped-query attention and a SwiGLU
feed-forward layer. forward(tokens int64 [1, T], input_pos int64 [T])
returns logits [1, T, vocab]. In eval mode each attention layer keeps its
keys and values in cache buffers of max_seq_len positions, written with
index_copy_ at input_pos, and attends to the whole cache under a causal
mask: the form et_ops.export.export_llm exports. In training mode it
attends within the batch of sequences it is given, without the cache.
The cache holds cache_dtype elements (float32 by default; torch.float16 or
torch.bfloat16 halve its bytes): keys and values are rounded to it as they
are written and widened back to float32 as they are read.
"""

import math

import torch
from torch import nn
from torch.nn import functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, max_seq_len, cache_dtype=torch.float32):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)
        cache_shape = (1, n_kv_heads, max_seq_len, self.head_dim)
        self.register_buffer("k_cache", torch.zeros(cache_shape, dtype=cache_dtype), persistent=False)
        self.register_buffer("v_cache", torch.zeros(cache_shape, dtype=cache_dtype), persistent=False)

    def repeat_kv(self, x):
        """[B, kv heads, S, D] -> [B, heads, S, D]: each key/value head serves several query heads."""
        b, kv, s, d = x.shape
        repeats = self.n_heads // kv
        return x[:, :, None].expand(b, kv, repeats, s, d).reshape(b, kv * repeats, s, d)

    def forward(self, x, input_pos, cos, sin, mask):
        B, T, _ = x.shape
        q = self.wq(x).view(B, T, self.n_heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        if not self.training:
            self.k_cache.index_copy_(2, input_pos, k.to(self.k_cache.dtype))
            self.v_cache.index_copy_(2, input_pos, v.to(self.v_cache.dtype))
            k, v = self.k_cache.to(q.dtype), self.v_cache.to(q.dtype)
        scores = q @ self.repeat_kv(k).transpose(2, 3) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(~mask, float("-inf"))
        out = F.softmax(scores, dim=-1) @ self.repeat_kv(v)
        return self.wo(out.transpose(1, 2).reshape(B, T, -1))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden, max_seq_len, cache_dtype=torch.float32):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = Attention(dim, n_heads, n_kv_heads, max_seq_len, cache_dtype)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = FeedForward(dim, hidden)

    def forward(self, x, input_pos, cos, sin, mask):
        h = x + self.attention(self.attention_norm(x), input_pos, cos, sin, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab_size, max_seq_len=128, n_layers=2, dim=128, n_heads=4, n_kv_heads=2, hidden=384,
                 cache_dtype=torch.float32):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList(Block(dim, n_heads, n_kv_heads, hidden, max_seq_len, cache_dtype)
                                    for _ in range(n_layers))
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        head_dim = dim // n_heads
        inverse = 1.0 / 10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim)
        angles = torch.outer(torch.arange(max_seq_len).float(), inverse)
        angles = torch.cat((angles, angles), dim=-1)
        self.register_buffer("rope_cos", angles.cos(), persistent=False)
        self.register_buffer("rope_sin", angles.sin(), persistent=False)
        self.register_buffer("causal", torch.tril(torch.ones(max_seq_len, max_seq_len, dtype=torch.bool)),
                             persistent=False)

    def forward(self, tokens, input_pos):
        x = self.tok_embeddings(tokens)
        cos, sin = self.rope_cos[input_pos], self.rope_sin[input_pos]
        # training: within the sequences given; inference: the whole cache
        mask = self.causal[input_pos][:, :tokens.shape[1]] if self.training else self.causal[input_pos]
        for layer in self.layers:
            x = layer(x, input_pos, cos, sin, mask)
        return self.output(self.norm(x))
