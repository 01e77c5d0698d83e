"""PyTorch's side: the float model and PyTorch's own quantized model, one image at a time."""

import copy
import statistics
import time

import numpy as np
import torch
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

import et_ops.export as ex

from . import data

# PyTorch's quantized engines that run the mapping et_ops.export.quantize uses (qnnpack's: activations
# in the full uint8 range); fbgemm and x86 expect a reduced range.
ENGINES = [e for e in ("onednn", "qnnpack") if e in torch.backends.quantized.supported_engines]


def quantized_model(model, example_inputs, calibration, engine):
    """PyTorch's quantized model (convert_fx) for `engine`, from the observers et_ops.export.quantize uses:
    the same mapping, calibrated on the same batches."""
    torch.backends.quantized.engine = engine
    prepared = prepare_fx(copy.deepcopy(model).eval(), get_default_qconfig_mapping(ex.DEFAULT_BACKEND),
                          example_inputs)
    with torch.no_grad():
        for batch in calibration:
            prepared(*batch)
    return convert_fx(prepared)


def classify(module, images, engine=None):
    """(labels int64 [N], median seconds per image) of `module` on `images`, one image per call, one thread."""
    images = data.check_images(images)
    torch.set_num_threads(1)
    if engine is not None:
        torch.backends.quantized.engine = engine
    scores, times = [], []
    with torch.no_grad():
        for image in images:
            x = torch.from_numpy(image[None])
            start = time.perf_counter()
            out = module(x)
            times.append(time.perf_counter() - start)
            scores.append(out.numpy())
    return data.labels_from_scores(np.concatenate(scores), len(images)), statistics.median(times)
