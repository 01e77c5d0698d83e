"""Transformers written the common ways, small: the exporter's tests on models nobody here wrote.

- `gpt2()`: a decoder in GPT-2 / nanoGPT style (fused qkv, LayerNorm, tanh
  GELU, learned positions, tied embeddings, ``B, T, C = x.size()``, a causal
  mask buffer);
- `llama()`: a decoder in Llama style (RMSNorm, rotary embeddings computed in
  forward, grouped-query attention, SwiGLU);
- `transformer_encoder(...)`: PyTorch's own nn.TransformerEncoder (its eval
  fast path, or a causal mask, or norm_first);
- `wav2vec2()`: torchaudio's wav2vec2 model (group-norm feature extractor,
  weight-normed positional convolution), random weights.

Each returns (module, example inputs). Token inputs are int64 [1, T].
"""

import math

import torch
from torch import nn
from torch.nn import functional as F

VOCAB = 96
SEQUENCE = 12


def tokens(seed=0, length=SEQUENCE):
    return torch.randint(0, VOCAB, (1, length), generator=torch.Generator().manual_seed(seed))


# ---- GPT-2 style (after nanoGPT's model.py) ----

class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class GPT2Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT2(nn.Module):
    def __init__(self, vocab=VOCAB, block_size=32, n_layer=2, n_head=2, n_embd=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([GPT2Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def gpt2(seed=0):
    torch.manual_seed(seed)
    return GPT2().eval(), (tokens(seed),)


# ---- Llama style ----

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(head_dim, length, theta=10000.0):
    frequencies = 1.0 / (theta ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(length).float(), frequencies)
    return torch.cos(angles), torch.sin(angles)


def apply_rotary(x, cos, sin):
    x1, x2 = x[..., ::2], x[..., 1::2]
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(-2)


class LlamaAttention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads):
        super().__init__()
        self.n_heads, self.n_kv_heads, self.head_dim = n_heads, n_kv_heads, dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def forward(self, x):
        bsz, seqlen, _ = x.shape
        q = self.wq(x).view(bsz, seqlen, self.n_heads, self.head_dim)
        k = self.wk(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        v = self.wv(x).view(bsz, seqlen, self.n_kv_heads, self.head_dim)
        cos, sin = rotary_tables(self.head_dim, seqlen)
        cos, sin = cos.view(1, seqlen, 1, -1), sin.view(1, seqlen, 1, -1)
        q, k = apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)
        q, k, v = q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
        repeats = self.n_heads // self.n_kv_heads
        k = k.repeat_interleave(repeats, dim=1)
        v = v.repeat_interleave(repeats, dim=1)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        mask = torch.full((seqlen, seqlen), float("-inf")).triu(1)
        scores = F.softmax(scores + mask, dim=-1)
        out = torch.matmul(scores, v).transpose(1, 2).reshape(bsz, seqlen, -1)
        return self.wo(out)


class LlamaFeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden):
        super().__init__()
        self.attention_norm = RMSNorm(dim)
        self.attention = LlamaAttention(dim, n_heads, n_kv_heads)
        self.ffn_norm = RMSNorm(dim)
        self.feed_forward = LlamaFeedForward(dim, hidden)

    def forward(self, x):
        h = x + self.attention(self.attention_norm(x))
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=VOCAB, dim=64, n_layers=2, n_heads=4, n_kv_heads=2, hidden=128):
        super().__init__()
        self.tok_embeddings = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([LlamaBlock(dim, n_heads, n_kv_heads, hidden) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.output(self.norm(h))


def llama(seed=0):
    torch.manual_seed(seed)
    return Llama().eval(), (tokens(seed),)


# ---- PyTorch's nn.TransformerEncoder ----

class CausalEncoder(nn.Module):
    """nn.TransformerEncoder called with a causal mask (PyTorch's ordinary, non fused path)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, x):
        mask = nn.Transformer.generate_square_subsequent_mask(x.size(1))
        return self.encoder(x, mask=mask)


def transformer_encoder(seed=0, causal=False, norm_first=False, activation="relu"):
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation=activation, batch_first=True,
                                       norm_first=norm_first)
    encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False).eval()
    x = torch.randn(1, SEQUENCE, 64, generator=torch.Generator().manual_seed(seed))
    return (CausalEncoder(encoder).eval() if causal else encoder), (x,)


# ---- torchaudio's wav2vec2 ----

class Features(nn.Module):
    """wav2vec2's forward returns (features, lengths=None): the features."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, waveforms):
        return self.model(waveforms)[0]


def wav2vec2(seed=0):
    import torchaudio  # Debian's python3-torchaudio
    torch.manual_seed(seed)
    model = torchaudio.models.wav2vec2_model(
        extractor_mode="group_norm", extractor_conv_layer_config=[(32, 10, 5), (32, 3, 2), (32, 2, 2)],
        extractor_conv_bias=False, encoder_embed_dim=64, encoder_projection_dropout=0.0, encoder_pos_conv_kernel=16,
        encoder_pos_conv_groups=4, encoder_num_layers=2, encoder_num_heads=4, encoder_attention_dropout=0.0,
        encoder_ff_interm_features=128, encoder_ff_interm_dropout=0.0, encoder_dropout=0.0,
        encoder_layer_norm_first=False, encoder_layer_drop=0.0, aux_num_out=None)
    waveform = torch.randn(1, 800, generator=torch.Generator().manual_seed(seed))
    return Features(model).eval(), (waveform,)


MODELS = {
    "gpt2": gpt2,
    "llama": llama,
    "encoder": transformer_encoder,
    "encoder_causal": lambda seed=0: transformer_encoder(seed, causal=True),
    "encoder_norm_first": lambda seed=0: transformer_encoder(seed, norm_first=True, activation="gelu"),
    "wav2vec2": wav2vec2,
}


# ---- the remaining operators transformers use, in one module ----

class Indexing(nn.Module):
    """Advanced indexing, index_put / index_copy / index_select, masks, comparisons, reductions, casts."""

    def forward(self, x, index):
        rows = x[index]  # index.Tensor
        columns = x[:, index]  # index.Tensor with a leading None
        put = x.index_put((index,), torch.ones(index.shape[0], x.shape[1]))
        copied = x.index_copy(0, index, rows * 2.0)
        selected = x.index_select(1, index) + x[:, 0:1]  # select / slice
        masked = x.masked_fill(x > 0.5, 0.5)
        chosen = torch.where(torch.logical_not(x >= 0), x, -x) + torch.where(x != x[0], x, x * 3.0)
        values, positions = x.max(dim=-1, keepdim=True)
        first, *_ = x.unbind(1)
        scores = torch.baddbmm(torch.ones(1, 1, 1), x.unsqueeze(0), x.t().unsqueeze(0), beta=0.5, alpha=0.25)
        casts = positions.float() + x.long().float()
        powers = torch.pow(x * x + 1.0, x) + x.exp().sqrt() - torch.neg(x).sum(0, keepdim=True)
        return (rows.sum() + columns.sum(), put, copied, selected, masked, chosen, values, first,
                F.log_softmax(scores, dim=0), casts, powers, F.gelu(x))


def indexing(seed=0):
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(seed))
    return Indexing().eval(), (x, torch.tensor([4, 0, 2]))
