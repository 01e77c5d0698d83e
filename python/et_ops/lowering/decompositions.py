"""The front end's own decompositions: PyTorch's fused CPU operators, written as the operators they fuse.

`TABLE` is passed to make_fx (tracing.py): instead of recording one of
these operators, the trace records what its function here calls. It holds
only fused operators that have no kernel: PyTorch's generic decomposition
tables would also split layer_norm, softmax, gelu and linear layers into
elementwise steps (more instructions, another order of summation, no
fused kernel left to call), so they are not used.

- ``aten::_transformer_encoder_layer_fwd``: nn.TransformerEncoderLayer's
  eval fast path (batch_first, no attention mask);
- ``aten::_native_multi_head_attention``: nn.MultiheadAttention's eval fast
  path (batch_first), with its averaged or per-head attention weights.

Both compute as PyTorch's eager (non fused) modules do; the fused kernels
differ from those by float summation order only.
"""

import math

import torch
from torch.nn import functional as F

aten = torch.ops.aten


def _attention_mask(mask, mask_type, batch, length):
    """An additive float mask broadcastable to [batch, heads, length, length], or None."""
    if mask is None:
        return None
    if mask_type == 1:  # key padding: [batch, length], True where a key is padding
        mask = mask.view(batch, 1, 1, length)
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=torch.float32).masked_fill(mask, float("-inf"))
    return mask


def _projections(query, key, value, embed_dim, qkv_weight, qkv_bias):
    if query is key and key is value:
        return F.linear(query, qkv_weight, qkv_bias).chunk(3, dim=-1)
    weights = qkv_weight.split(embed_dim)
    biases = qkv_bias.split(embed_dim) if qkv_bias is not None else (None, None, None)
    return tuple(F.linear(t, w, b) for t, w, b in zip((query, key, value), weights, biases))


def attention(query, key, value, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None,
              mask_type=None):
    """(output, attention probabilities [batch, heads, target, source]) of multi-head attention, batch first."""
    batch, target, _ = query.shape
    source = key.shape[1]
    head_dim = embed_dim // num_heads
    q, k, v = _projections(query, key, value, embed_dim, qkv_weight, qkv_bias)

    def heads(t, length):
        return t.reshape(batch, length, num_heads, head_dim).transpose(1, 2)
    q, k, v = heads(q, target) / math.sqrt(head_dim), heads(k, source), heads(v, source)
    scores = torch.matmul(q, k.transpose(-2, -1))
    additive = _attention_mask(mask, mask_type, batch, source)
    if additive is not None:
        scores = scores + additive
    probabilities = F.softmax(scores, dim=-1)
    output = torch.matmul(probabilities, v).transpose(1, 2).reshape(batch, target, embed_dim)
    return F.linear(output, proj_weight, proj_bias), probabilities


def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                mask=None, need_weights=True, average_attn_weights=True, mask_type=None):
    output, probabilities = attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                                      proj_bias, mask, mask_type)
    if not need_weights:
        return output, torch.empty(0)
    return output, probabilities.mean(dim=1) if average_attn_weights else probabilities


def transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                                  norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                                  ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
    shape = (embed_dim,)

    def self_attention(t):
        return attention(t, t, t, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask,
                         mask_type)[0]

    def feed_forward(t):
        hidden = F.linear(t, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(hidden) if use_gelu else F.relu(hidden), ffn_weight_2, ffn_bias_2)

    x = src
    if norm_first:
        x = x + self_attention(F.layer_norm(x, shape, norm_weight_1, norm_bias_1, eps))
        return x + feed_forward(F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps))
    x = F.layer_norm(x + self_attention(x), shape, norm_weight_1, norm_bias_1, eps)
    return F.layer_norm(x + feed_forward(x), shape, norm_weight_2, norm_bias_2, eps)


TABLE = {
    aten._transformer_encoder_layer_fwd.default: transformer_encoder_layer_fwd,
    aten._native_multi_head_attention.default: native_multi_head_attention,
}
