"""Export a PyTorch model as an et_ops program (.etp).

From Python, with PyTorch's own quantization flow (FX graph mode):

    import et_ops.export as ex
    reference = ex.quantize(model, example_inputs, calibration)   # PyTorch's reference quantized model
    program = ex.export(reference, example_inputs)                # an ExportedProgram
    program.save("model.etp")

A language model (forward(tokens int64 [1, T], input_pos int64 [T]) -> logits
[1, T, vocab], its key/value cache in buffers that forward updates in place):

    quantized = ex.quantize_weights(model, "8da4w")
    ex.export_llm(quantized, max_seq_len=128).save("model.etp")

From the command line, for a module that a factory function builds:

    python3 -m et_ops.export --module PKG.MOD:FACTORY --input-shape 1,3,224,224 \\
        [--calibration FILE.npy | --calibration-batches N] [--seed S] [--name NAME] [--backend NAME] --output-dir DIR
    python3 -m et_ops.export --model mlp|cnn --output-dir DIR    # the built-in examples

writes DIR/NAME.etp, NAME_input_0.npy (an example input), NAME_reference.npy
(the reference quantized model's output for it) and NAME_quantization.json
(every quantization parameter and how they were chosen).

The command line writes the same bytes on every x86-64 machine: before it
imports torch it pins PyTorch to kernels that every such CPU runs alike
(et_ops.cpu_independence: aten's baseline kernels, one thread, no oneDNN,
glibc's baseline libm), because PyTorch's weight initialisation, float32
convolutions and observers otherwise differ by an ulp between instruction
sets, and a calibration range that moved by one ulp would change the
program's bytes. Its output is a pure function of the command line, with no
timestamps or versions in it.
"""

if __name__ == "__main__":
    # Before anything imports torch (see the docstring).
    from et_ops import cpu_independence
    cpu_independence.pin_process()

import argparse
import copy
import hashlib
import importlib
import json
import os
import sys

import numpy as np
import torch
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_to_reference_fx, prepare_fx

from . import cpu_independence, lowering, models
from .errors import UsageError
from .etp import ProgramBuilder
from .lowering import UnsupportedError, UnsupportedNode, dynamic_shapes, tracing
from .lowering import attention, lowbit, xnnpack as xnnpack_backend
from .weight_quantization import SCHEMES, quantize_weights

__all__ = ["quantize", "quantize_weights", "SCHEMES", "export", "export_llm", "ExportedProgram", "UnsupportedError", "UnsupportedNode", "DEFAULT_BACKEND",
           "BACKENDS"]

#: The kernel backends a program can be exported for: "reference" (the
#: portable and quantized kernel sets; the default) and "xnnpack" (int8
#: convolution, linear, add and pooling of the xnnpack kernel set, the
#: rest on the reference path).
BACKENDS = ("reference", xnnpack_backend.NAME)

#: The quantization backend whose default qconfig mapping quantize() uses.
DEFAULT_BACKEND = "qnnpack"


def _as_tuple(inputs):
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def quantize(model, example_inputs, calibration, qconfig_mapping=None):
    """PyTorch's reference quantized model of `model`, calibrated on `calibration`.

    prepare_fx with `qconfig_mapping` (PyTorch's default mapping for the
    qnnpack backend when None), every batch of `calibration` (an iterable of
    input tuples or tensors) run through it, then convert_to_reference_fx.
    `model` itself is not modified. The result's output is the numeric
    reference of the exported program.
    """
    example_inputs = _as_tuple(example_inputs)
    model = copy.deepcopy(model).eval()
    mapping = qconfig_mapping if qconfig_mapping is not None else get_default_qconfig_mapping(DEFAULT_BACKEND)
    prepared = prepare_fx(model, mapping, example_inputs)
    batches = 0
    with torch.no_grad():
        for batch in calibration:
            prepared(*_as_tuple(batch))
            batches += 1
    if batches == 0:
        raise UsageError("calibration holds no batches: the observers need at least one")
    reference = convert_to_reference_fx(prepared)
    tracing.annotate(reference, model)
    return reference


class ExportedProgram:
    """A lowered program: its bytes, its operators and its quantization parameters."""

    def __init__(self, lowered):
        self._lowered = lowered
        self._bytes = lowered.builder.to_bytes()

    @property
    def name(self):
        return self._lowered.builder.name

    @property
    def operators(self):
        """The operators the program uses, sorted."""
        return sorted({i["op"] for i in self._lowered.builder.instructions})

    @property
    def quantization(self):
        """Every quantization parameter: activations (by quantize node), weights (by module), outputs."""
        return {
            "activations": {name: q.as_dict() for name, q in self._lowered.activation_qparams.items()},
            "weights": {name: q.as_dict() for name, q in self._lowered.weight_qparams.items()},
            "outputs": [None if q is None else q.as_dict() for q in self._lowered.output_qparams],
        }

    def to_bytes(self):
        return self._bytes

    def save(self, path):
        with open(path, "wb") as f:
            f.write(self._bytes)

    def __repr__(self):
        return f"<et_ops.export.ExportedProgram '{self.name}': {len(self._bytes)} bytes, operators {self.operators}>"


def export(module, example_inputs, name=None, backend="reference"):
    """Lowers `module` (a reference quantized GraphModule, or a float module) to a program.

    Shapes are static: those of `example_inputs`. Raises UnsupportedError,
    listing every node that cannot be lowered, when some cannot.

    `backend` is one of BACKENDS: "reference" programs need only the
    portable and quantized kernel sets; "xnnpack" programs run every
    dequantize -> convolution | linear | add | pooling -> quantize pattern
    as one int8 operator of the xnnpack kernel set (libet_kernels_xnnpack)
    and leave everything else on the reference path.
    """
    if backend not in BACKENDS:
        raise UsageError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    example_inputs = _as_tuple(example_inputs)
    graph_module = tracing.trace(module, example_inputs)
    name = name or type(module).__name__
    lowered = lowering.lower(graph_module, example_inputs, name)
    if backend == xnnpack_backend.NAME:
        lowered.builder = xnnpack_backend.rewrite(lowered.builder)
    return ExportedProgram(lowered)


# ---- language models ----

#: The symbol of a language-model program's number of tokens per run.
TOKENS_SYMBOL = "T"

# Lengths the model is traced at: small, odd ones first, so that a length
# rarely equals another size of the model (which could make PyTorch or the
# lowering take another path at that length alone).
_PREFERRED_LENGTHS = (7, 5, 11, 3, 13, 9, 17, 2, 19, 23)


def _trace_lengths(max_seq_len):
    """Candidate triples of lengths to trace at, in order of preference."""
    lengths = [t for t in _PREFERRED_LENGTHS if t < max_seq_len]
    lengths += [t for t in range(2, max_seq_len + 1) if t not in lengths]
    return [lengths[i:i + 3] for i in range(min(3, len(lengths) - 2))]


def _lowered_at(model, length, name):
    tokens = torch.zeros((1, length), dtype=torch.int64)
    positions = torch.arange(length, dtype=torch.int64)
    builder = ProgramBuilder(name, share_scalars=False)
    return lowering.lower(tracing.trace(model, (tokens, positions)), (tokens, positions), name, builder)


def _check_interface(builder, max_seq_len):
    """The vocabulary size; ValueError unless inputs and output are tokens [1, T], input_pos [T], logits [1, T, V]."""
    t = {"sym": TOKENS_SYMBOL, "mul": 1, "add": 0}
    sizes = [builder.value(i)["sizes"] for i in builder.inputs + builder.outputs[:1]]
    dtypes = [builder.value(i)["dtype"] for i in builder.inputs + builder.outputs[:1]]
    expected = "forward(tokens int64 [1, T], input_pos int64 [T]) returning logits float32 [1, T, vocab]"
    if len(builder.inputs) != 2 or not builder.outputs or dtypes != ["int64", "int64", "float32"] \
            or sizes[0] != [1, t] or sizes[1] != [t] or len(sizes[2]) != 3 or sizes[2][:2] != [1, t] \
            or not isinstance(sizes[2][2], int):
        raise ValueError(f"export_llm needs {expected} for every T from 1 to max_seq_len={max_seq_len}")
    return sizes[2][2]


def export_llm(model, max_seq_len, name=None, scheme=None, group_size=32, lowbit_linears=True, fused_attention=True):
    """Lowers a decoder-only language model to one program for every prompt length from 1 to `max_seq_len`.

    `model.forward(tokens, input_pos)` takes token ids int64 [1, T] and
    their positions int64 [T] and returns logits float32 [1, T, vocab]; its
    key/value cache lives in buffers that forward updates in place
    (``cache[:, :, input_pos] = k``, ``index_copy_``, ``copy_``) and that
    hold `max_seq_len` positions. The program has bounded dynamic shapes:
    the symbol T, from 1 to max_seq_len, is bound from the inputs at each
    run, so one program runs a whole prompt at once (prefill) and one token
    at a time (decode). The buffers become the program's state: their
    values now are its initial values, each run state keeps its own copy
    from run to run, and reset() restores them.

    The model is traced at three lengths; sizes and int arguments that
    change with T must be affine in it (a*T + b). `scheme` (one of SCHEMES)
    quantizes the weights first with quantize_weights(model, scheme,
    group_size); a model quantize_weights already returned is exported as
    it is. With `lowbit_linears` (the default), every linear layer whose
    weights quantize_weights quantized runs as one low-bit linear of the
    quantized kernel set (et_quantized::linear_8da4w / 8da8w / int4 / int8:
    weights repacked when the program loads, output channels split over the
    run state's threads; lowering.lowbit.fuse_linears) instead of the
    reference chain of dequantize operators and aten::linear; False keeps the
    chain, whose every operator computes exactly what the reference module
    does. With `fused_attention` (the default), each attention written as
    softmax(q @ k^T / divisor, masked) @ v, its key and value possibly
    repeated for groups of query heads, runs as one et_portable::attention
    reading the cache where it is (lowering.attention.fuse_attention): the
    chain's results to rounding (a score sums in another fixed order),
    without its transposed and repeated copies of the cache. The header's metadata holds ``vocab_size`` and ``max_seq_len``.
    Raises UnsupportedError for nodes without a lowering and ValueError
    when the model does not fit the interface or its shapes are not affine
    in T.
    """
    if isinstance(max_seq_len, bool) or not isinstance(max_seq_len, int) or max_seq_len < 4:
        raise ValueError(f"max_seq_len must be an int of at least 4, got {max_seq_len!r}")
    if scheme is not None:
        model = quantize_weights(model, scheme, group_size)
    name = name or type(model).__name__
    mismatches = []
    for lengths in _trace_lengths(max_seq_len):
        lowered = [_lowered_at(model, length, name) for length in lengths]
        try:
            builder = dynamic_shapes.merge([p.builder for p in lowered], lengths, TOKENS_SYMBOL, (1, max_seq_len))
        except dynamic_shapes.ShapeMismatch as e:
            mismatches.append(f"traced at T = {', '.join(map(str, lengths))}: {e}")
            continue
        vocab_size = _check_interface(builder, max_seq_len)
        if lowbit_linears:
            builder = lowbit.fuse_linears(builder)
        if fused_attention:
            builder = attention.fuse_attention(builder)
        builder.metadata.update({"vocab_size": vocab_size, "max_seq_len": max_seq_len})
        first = lowered[0]
        return ExportedProgram(lowering.LoweredProgram(builder, first.activation_qparams, first.weight_qparams,
                                                       first.output_qparams))
    raise ValueError(f"cannot export {name} for every length from 1 to {max_seq_len}: its program changes with T "
                     "in more than its sizes\n  " + "\n  ".join(mismatches))


# ---- the command line ----

def _factory(spec):
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise SystemExit(f"--module must be PKG.MOD:FACTORY, got '{spec}'")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as e:
        raise SystemExit(f"--module {spec}: {e}") from None
    return factory


def _shape(text):
    try:
        shape = tuple(int(s) for s in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma-separated list of sizes") from None
    if not shape or any(s <= 0 for s in shape):
        raise argparse.ArgumentTypeError(f"'{text}': every size must be positive")
    return shape


def _normal(shape, seed, stream):
    """Standard normal float32 data, from numpy's PCG64 seeded with (seed, stream)."""
    return np.random.default_rng([seed, stream]).standard_normal(shape, dtype=np.float32)


def _calibration(args, input_shape):
    """The calibration batches, and how they were made (for the report)."""
    if args.calibration is not None:
        samples = np.load(args.calibration)
        if samples.dtype != np.float32 or samples.shape[1:] != input_shape[1:]:
            raise SystemExit(f"--calibration {args.calibration}: expected float32 samples of shape "
                             f"[N, {', '.join(map(str, input_shape[1:]))}], got {samples.dtype} {list(samples.shape)}")
        with open(args.calibration, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        batch = input_shape[0]
        batches = [torch.from_numpy(samples[i:i + batch]) for i in range(0, len(samples), batch)]
        return batches, {"file": os.path.basename(args.calibration), "sha256": digest, "samples": len(samples),
                         "batch": batch}
    data = _normal((args.calibration_batches,) + input_shape, args.seed, 1)
    return [torch.from_numpy(b) for b in data], {
        "batches": args.calibration_batches,
        "distribution": f"standard normal float32, numpy PCG64 seeded with [{args.seed}, 1]"}


def _report(args, source, input_shape, program, calibration_info):
    quantization = program.quantization
    output = quantization["outputs"][0] if quantization["outputs"] else None
    return {
        "program": program.name,
        "source": source,
        "input_shape": list(input_shape),
        "seed": args.seed,
        "qconfig_mapping": f"PyTorch's default for the {DEFAULT_BACKEND} backend",
        "calibration": calibration_info,
        "example_input": f"standard normal float32, numpy PCG64 seeded with [{args.seed}, 0]",
        "activations": quantization["activations"],
        "weights": quantization["weights"],
        "output": output,
        "tolerance": {
            "output_step": None if output is None else output["scale"],
            "rule": "the program's output differs from the reference by a few output quantization steps at "
                    "most (see \"Numbers\" in the exporting page of the documentation)",
        },
        "reference": "the reference quantized model (convert_to_reference_fx) on the example input",
        "pytorch_numerics": cpu_independence.describe(),
    }


def output_paths(name, output_dir):
    base = os.path.join(output_dir, name)
    return {"program": base + ".etp", "input": base + "_input_0.npy", "reference": base + "_reference.npy",
            "quantization": base + "_quantization.json"}


def export_command(args):
    """Runs the command line's export; returns the paths of the four files."""
    if args.model is not None:
        built_in = models.BUILT_IN[args.model]
        factory_spec, input_shape, name = built_in.factory, built_in.input_shape, args.name or built_in.name
        source = {"model": args.model}
    else:
        if args.input_shape is None:
            raise SystemExit("--module needs --input-shape")
        factory_spec, input_shape = args.module, args.input_shape
        name = args.name or factory_spec.partition(":")[2]
        source = {"module": factory_spec}
    factory = _factory(factory_spec)
    torch.manual_seed(args.seed)
    model = factory().eval()
    example = torch.from_numpy(_normal(input_shape, args.seed, 0))
    calibration, calibration_info = _calibration(args, input_shape)
    reference = quantize(model, (example,), calibration)
    program = export(reference, (example,), name=name, backend=args.backend)
    with torch.no_grad():
        reference_output = reference(example)
    os.makedirs(args.output_dir, exist_ok=True)
    paths = output_paths(name, args.output_dir)
    program.save(paths["program"])
    np.save(paths["input"], example.numpy())
    np.save(paths["reference"], reference_output.numpy())
    with open(paths["quantization"], "w", encoding="utf-8") as f:
        f.write(json.dumps(_report(args, source, input_shape, program, calibration_info), indent=2,
                           sort_keys=True) + "\n")
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m et_ops.export",
                                     description="Quantize a PyTorch model with PyTorch's own flow and export it "
                                                 "as an et_ops program.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--module", metavar="PKG.MOD:FACTORY", help="a function that returns the float module")
    what.add_argument("--model", choices=sorted(models.BUILT_IN), help="a built-in example model")
    parser.add_argument("--input-shape", type=_shape, metavar="N,C,H,W", help="the input's shape (with --module)")
    calibration = parser.add_mutually_exclusive_group()
    calibration.add_argument("--calibration", metavar="FILE.npy", help="float32 calibration samples, stacked")
    calibration.add_argument("--calibration-batches", type=int, default=8, metavar="N",
                             help="random calibration batches (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the weights, the example input and the "
                                                             "calibration data (default 0)")
    parser.add_argument("--name", help="the program's name (default: the factory's or the model's)")
    parser.add_argument("--output-dir", required=True, help="directory for the program and its data files")
    parser.add_argument("--backend", choices=BACKENDS, default="reference",
                        help="the kernels the program targets: reference (portable and quantized kernel sets, the "
                             "default) or xnnpack (int8 operators of the xnnpack kernel set where they apply)")
    args = parser.parse_args(argv)
    if args.calibration_batches <= 0:
        parser.error("--calibration-batches must be positive")
    cpu_independence.pin_torch(torch)
    try:
        paths = export_command(args)
    except UnsupportedError as e:
        print(f"python3 -m et_ops.export: {e}", file=sys.stderr)
        return 1
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
