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
  path (self attention, batch_first).

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


def multi_head_self_attention(x, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None,
                              mask_type=None):
    batch, length, _ = x.shape
    head_dim = embed_dim // num_heads
    q, k, v = F.linear(x, qkv_weight, qkv_bias).chunk(3, dim=-1)

    def heads(t):
        return t.reshape(batch, length, num_heads, head_dim).transpose(1, 2)
    q, k, v = heads(q) / math.sqrt(head_dim), heads(k), heads(v)
    scores = torch.matmul(q, k.transpose(-2, -1))
    additive = _attention_mask(mask, mask_type, batch, length)
    if additive is not None:
        scores = scores + additive
    attention = torch.matmul(F.softmax(scores, dim=-1), v)
    return F.linear(attention.transpose(1, 2).reshape(batch, length, embed_dim), proj_weight, proj_bias)


def native_multi_head_attention(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                mask=None, need_weights=True, average_attn_weights=True, mask_type=None):
    if need_weights:
        raise NotImplementedError("nn.MultiheadAttention's fast path with need_weights=True: pass "
                                  "need_weights=False")
    if query is not key or key is not value:
        raise NotImplementedError("aten::_native_multi_head_attention is decomposed for self attention only")
    output = multi_head_self_attention(query, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                       mask, mask_type)
    return output, torch.empty(0)


def transformer_encoder_layer_fwd(src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
                                  norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2, norm_bias_2,
                                  ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None, mask_type=None):
    shape = (embed_dim,)

    def attention(t):
        return multi_head_self_attention(t, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                                         mask, mask_type)

    def feed_forward(t):
        hidden = F.linear(t, ffn_weight_1, ffn_bias_1)
        return F.linear(F.gelu(hidden) if use_gelu else F.relu(hidden), ffn_weight_2, ffn_bias_2)

    x = src
    if norm_first:
        x = x + attention(F.layer_norm(x, shape, norm_weight_1, norm_bias_1, eps))
        return x + feed_forward(F.layer_norm(x, shape, norm_weight_2, norm_bias_2, eps))
    x = F.layer_norm(x + attention(x), shape, norm_weight_1, norm_bias_1, eps)
    return F.layer_norm(x + feed_forward(x), shape, norm_weight_2, norm_bias_2, eps)


TABLE = {
    aten._transformer_encoder_layer_fwd.default: transformer_encoder_layer_fwd,
    aten._native_multi_head_attention.default: native_multi_head_attention,
}
