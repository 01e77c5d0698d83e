"""copy_module(module): a deep copy of a torch module, also of one that uses weight_norm.

torch.nn.utils.weight_norm keeps the weight it computes before each forward
as a plain attribute; computed with autograd on, that tensor is not a graph
leaf, and deepcopy refuses it. The weight is recomputed without autograd
first (the same values: forward recomputes it anyway), then the module is
copied.
"""

import copy

import torch
from torch.nn.utils.weight_norm import WeightNorm


def copy_module(module):
    if isinstance(module, torch.nn.Module):
        for submodule in module.modules():
            for hook in submodule._forward_pre_hooks.values():
                if isinstance(hook, WeightNorm):
                    with torch.no_grad():
                        setattr(submodule, hook.name, hook.compute_weight(submodule))
    return copy.deepcopy(module)
