"""Export a small quantized PyTorch model as an et_ops program.

    /usr/bin/python3 -m et_ops.export --model mlp|cnn --output-dir DIR

writes, for the program name N (qmlp or qcnn):

- DIR/N.etp               the Q/DQ program (.etp version 1)
- DIR/N_input_0.npy       an example input
- DIR/N_reference.npy     the eager float PyTorch output for that input
- DIR/N_quantization.json every quantization parameter, the output step
                          that bounds the program's error, and how both
                          were chosen

Steps:
1. Build the model with fixed weights (models.py).
2. Calibrate: run the calibration set through the float model in float64
   with a min/max observer at every quantization point, and choose
   per-tensor affine int8 activation parameters; weights are per-channel
   symmetric int8 (quantization.py).
3. Empirical bias correction: quantizing weights and activations shifts the
   mean of every layer's output. Layer by layer, in graph order, the float
   bias is corrected by the mean difference (per output channel, over the
   calibration set) between the layer's output in the simulated quantized
   model and in the float model. On held-out inputs this roughly halves the
   share of outputs that miss the float model by more than one step.
4. Emit the program, and evaluate the eager reference in float64, rounded
   to float32.

The files are identical on every x86-64 machine: the command line pins
PyTorch to kernels that every such CPU runs alike before it imports torch
(et_ops.cpu_independence: aten's baseline kernels, one thread, no oneDNN,
glibc's baseline libm), because PyTorch's weight initialisation and float32
convolutions otherwise differ by an ulp between instruction sets, and a calibration range or bias
correction that moved by one ulp would change the program's bytes. The
output is a pure function of the command line, with no timestamps or
versions in it.
"""

if __name__ == "__main__":
    # Before anything imports torch (see the docstring).
    from et_ops import cpu_independence
    cpu_independence.pin_process()

import argparse
import copy
import dataclasses
import json
import os
import sys

import numpy as np
import torch

from . import cpu_independence, models
from .lowering import FloatGraph, ProgramGraph, SimulatedGraph


def run_float64(spec, module, inputs):
    """The module's float64 output, and the FloatGraph that reproduced it through the graph function."""
    with torch.no_grad():
        expected = copy.deepcopy(module).double()(inputs.to(torch.float64))
        graph = FloatGraph()
        through_graph = spec.graph(graph, spec.layers(module), inputs.to(torch.float64))
    if not torch.equal(expected, through_graph):
        raise AssertionError(f"{spec.name}: the graph function does not reproduce the module")
    return expected, graph


def correct_biases(spec, layers, activation_qparams, calibration, float_graph):
    """Empirical bias correction (step 3 of the module docstring); returns corrected layers."""
    layers = dict(layers)
    corrections = {}
    for name, float_output in float_graph.layer_outputs.items():
        # Simulated again for every layer: each correction changes what the next layer sees.
        simulated = SimulatedGraph(activation_qparams)
        spec.graph(simulated, layers, calibration.numpy())
        shift = simulated.layer_outputs[name].astype(np.float64) - float_output
        # Layer outputs are [N, C] or [N, C, H, W]: average over all but the channel axis.
        mean_shift = shift.mean(axis=tuple(d for d in range(shift.ndim) if d != 1))
        layer = layers[name]
        layers[name] = dataclasses.replace(layer, bias=(layer.bias - mean_shift).astype(np.float32))
        corrections[name] = mean_shift
    return layers, corrections


@dataclasses.dataclass
class QuantizedModel:
    spec: models.ModelSpec
    module: torch.nn.Module
    layers: dict  # bias-corrected layers, as the program holds them
    activation_qparams: dict
    bias_corrections: dict
    example: torch.Tensor

    def reference(self):
        """The float model's output for the example: eager float64 PyTorch, rounded to float32."""
        output, _ = run_float64(self.spec, self.module, self.example)
        return output.to(torch.float32).numpy()

    def simulate(self, inputs=None):
        """What the exported program computes, with the kernels' numerics (for tests)."""
        inputs = self.example if inputs is None else inputs
        return self.spec.graph(SimulatedGraph(self.activation_qparams), self.layers, inputs.numpy())

    def program(self):
        graph = ProgramGraph(self.spec.program_name, self.activation_qparams)
        x = graph.input(self.spec.module_class.input_shape)
        graph.output(self.spec.graph(graph, self.layers, x))
        output_q = self.activation_qparams["output"]
        graph.builder.metadata = {
            "exported_by": "et_ops.export",
            "model": self.spec.name,
            "output_scale": output_q.scale,
            "output_zero_point": output_q.zero_point,
        }
        return graph


def quantize_model(model_name):
    spec = models.MODELS[model_name]
    module = models.build_model(spec)
    calibration = models.calibration_inputs(spec)
    _, float_graph = run_float64(spec, module, calibration)
    activation_qparams = {name: observer.qparams() for name, observer in float_graph.observers.items()}
    layers, corrections = correct_biases(spec, spec.layers(module), activation_qparams, calibration, float_graph)
    return QuantizedModel(spec, module, layers, activation_qparams, corrections, models.example_input(spec))


def quantization_report(model, weight_qparams):
    output_q = model.activation_qparams["output"]
    return {
        "program": model.spec.program_name,
        "model": model.spec.name,
        "activations": {name: q.as_dict() for name, q in model.activation_qparams.items()},
        "weights": {
            name: {
                "scheme": "per-channel symmetric",
                "axis": q.axis,
                "quant_min": q.quant_min,
                "quant_max": q.quant_max,
                "dtype": q.dtype,
                "scales": [float(s) for s in q.scales],
            }
            for name, q in weight_qparams.items()
        },
        "bias_correction": {name: [float(c) for c in shift] for name, shift in model.bias_corrections.items()},
        "output": output_q.as_dict(),
        "tolerance": {
            "output_step": output_q.scale,
            "rule": "the program's output is within one output quantization step of the reference",
        },
        "calibration": {
            "samples": models.CALIBRATION_SAMPLES,
            "distribution": "uniform [-1, 1), torch.rand with a seeded generator",
            "seed": models.CALIBRATION_SEED,
            "observer": "min/max over the float64 activations",
            "activation_scheme": "per-tensor affine int8, PyTorch choose-qparams (range includes 0)",
            "bias_correction": "empirical: mean output shift per channel over the calibration set, subtracted from the float bias",
        },
        "reference": "eager PyTorch float model evaluated in float64, rounded to float32",
        "pytorch_numerics": cpu_independence.describe(),
        "weight_seed": models.WEIGHT_SEED,
        "example_seed": models.EXAMPLE_SEED,
    }


def output_paths(program_name, output_dir):
    base = os.path.join(output_dir, program_name)
    return {
        "program": base + ".etp",
        "input": base + "_input_0.npy",
        "reference": base + "_reference.npy",
        "quantization": base + "_quantization.json",
    }


def export(model_name, output_dir):
    """Writes the four files of `model_name` into `output_dir`; returns their paths."""
    model = quantize_model(model_name)
    graph = model.program()
    report = quantization_report(model, graph.weight_qparams)
    os.makedirs(output_dir, exist_ok=True)
    paths = output_paths(model.spec.program_name, output_dir)
    graph.builder.write(paths["program"])
    np.save(paths["input"], model.example.numpy())
    np.save(paths["reference"], model.reference())
    with open(paths["quantization"], "w", encoding="utf-8") as f:
        f.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return paths


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m et_ops.export",
                                     description="Export a small quantized PyTorch model as an et_ops program.")
    parser.add_argument("--model", required=True, choices=sorted(models.MODELS))
    parser.add_argument("--output-dir", required=True, help="directory for the program and its data files")
    args = parser.parse_args(argv)
    cpu_independence.pin_torch(torch)
    for path in export(args.model, args.output_dir).values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
