"""End-to-end latency of real models: et_ops beside PyTorch, measured in one run.

    PYTHONPATH=build/src/python /usr/bin/python3 bench/models.py [--models resnet18,mobilenet_v2]
        [--size 224] [--runs 10] [--json FILE] [--chart FILE.png] [--isa=native|avx2]
        [--mapping qnnpack|x86|fbgemm]

For each architecture (torchvision's, with random weights and batch norm
conditioned as training would, test/python/export_contract.py; or the
exporter's built-in MLP), one thread:

- PyTorch eager float32;
- PyTorch 1.13's quantized model (convert_fx) on each of its quantized
  engines this build has (onednn, qnnpack), with that engine's default
  qconfig mapping, or with --mapping's on every engine;
- the et_ops program exported from PyTorch's reference quantized model
  (et_ops.export.quantize with the qnnpack mapping or --mapping's: x86 and
  fbgemm quantize activations to 7 bits, weights per channel), run
  through the Python module: for the reference backend (portable and
  quantized kernel sets), and for the xnnpack backend (the int8 kernel set)
  on one thread and on two (`program.run(inputs, threads=2)`).

--chart draws the latencies as a bar chart (python3-matplotlib);
docs/performance.png is made this way.

Each time is the median of --runs runs after two warm-up runs. Also printed:
each quantized model's distance from its reference quantized model on the
example input, in output quantization steps, and the reference quantized
model's error against the float model on that input (mean absolute
difference over the mean absolute float output): what the mapping costs.
"""

import os
import sys

# --isa avx2 measures what an AVX2 machine (no AVX-512) gets: oneDNN (one
# library, PyTorch's and the int8 set's), aten's kernels, XNNPACK and the
# kernel sets' SIMD paths capped to AVX2. Set before torch loads.
import isa_cap  # noqa: E402  (bench/isa_cap.py, beside this script)

isa_cap.apply(sys.argv)

import argparse
import copy
import json
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch
import torchvision
from torch.ao.quantization import get_default_qconfig_mapping
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test", "python"))
import export_contract  # noqa: E402  (test/python/export_contract.py)

import et_ops  # noqa: E402
import et_ops.export as ex  # noqa: E402
import et_ops.models  # noqa: E402

# name -> (factory, input shape; None: 3 channels of --size x --size)
ARCHITECTURES = {
    "resnet18": (lambda: torchvision.models.quantization.resnet18(weights=None, quantize=False), None),
    "mobilenet_v2": (lambda: torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False), None),
    "mobilenet_v3_large": (lambda: torchvision.models.quantization.mobilenet_v3_large(weights=None, quantize=False),
                           None),
    # torchvision 0.14 has no quantizable MobileNetV3-Small: FX quantizes the float model
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(weights=None), None),
    "googlenet": (lambda: torchvision.models.quantization.googlenet(weights=None, quantize=False, aux_logits=False,
                                                                    init_weights=False), None),
    "mlp": (et_ops.models.MLP, (4, 16)),  # the exporter's built-in example
}
DEFAULT_MODELS = "resnet18,mobilenet_v2"
ENGINES = [e for e in ("onednn", "qnnpack") if e in torch.backends.quantized.supported_engines]
CALIBRATION_BATCHES = 4


def median_ms(run, runs):
    for _ in range(2):
        run()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


# The xnnpack program runs in a process of its own, which has not imported
# torch: XNNPACK and oneDNN are one library each per process, PyTorch's
# too, and PyTorch's quantized engines would start them before --isa=avx2
# could cap them. Prints the median milliseconds on 1 and 2 threads and
# writes each thread count's output.
TIME_XNNPACK_PROGRAM = """
import json, statistics, sys, time
import numpy as np
import et_ops
path, input_path, runs, out_prefix = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
program = et_ops.load(path)
inputs = [np.load(input_path)]
times = {}
for threads in (1, 2):
    run = lambda: program.run(inputs, threads=threads)
    (output,) = run()
    np.save(f"{out_prefix}{threads}.npy", output)
    run()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        run()
        samples.append((time.perf_counter() - start) * 1e3)
    times[threads] = statistics.median(samples)
_, records = program.run(inputs, profile=True)
conversions = sum(r["op"] == "et_xnnpack::convert_layout.out" for r in records)
print(json.dumps({"times": times, "layout_conversions": conversions}))
"""


def time_xnnpack_program(path, x, runs, workdir):
    """{threads: median ms}, the output on one thread and the count of layout conversions a run makes, run in a
    process without torch."""
    input_path = os.path.join(workdir, "input.npy")
    np.save(input_path, x.numpy())
    out_prefix = os.path.join(workdir, "xnnpack_output_")
    child = subprocess.run([sys.executable, "-c", TIME_XNNPACK_PROGRAM, path, input_path, str(runs), out_prefix],
                           capture_output=True, text=True, check=False)
    if child.returncode != 0:
        raise SystemExit(f"timing {path} failed:\n{child.stderr}")
    result = json.loads(child.stdout)
    times = {int(k): v for k, v in result["times"].items()}
    one, two = (np.load(f"{out_prefix}{t}.npy") for t in (1, 2))
    if not np.array_equal(one, two):
        raise SystemExit(f"{path}: the xnnpack program's output on 2 threads differs from one thread's")
    return times, one, result["layout_conversions"]


def normal(shape, seed):
    return torch.from_numpy(np.random.default_rng(seed).standard_normal(shape, dtype=np.float32))


def pytorch_quantized(model, engine, mapping, x, calibration):
    """PyTorch's own quantized model (convert_fx) of `mapping` on `engine`."""
    torch.backends.quantized.engine = engine
    prepared = prepare_fx(copy.deepcopy(model), get_default_qconfig_mapping(mapping), (x,))
    with torch.no_grad():
        for batch in calibration:
            prepared(batch)
    return convert_fx(copy.deepcopy(prepared))


def measure(name, size, runs, workdir, mapping=None):
    """Every row for model `name`; `mapping` None: each PyTorch engine with its own default mapping, et_ops with
    qnnpack's."""
    factory, shape = ARCHITECTURES[name]
    shape = shape or (1, 3, size, size)
    torch.manual_seed(0)
    model = export_contract.condition(factory(), shape)
    x = normal(shape, 0)
    calibration = [normal(shape, 1 + i) for i in range(CALIBRATION_BATCHES)]
    rows = []
    with torch.no_grad():
        rows.append(("PyTorch eager float32", median_ms(lambda: model(x), runs), None))
        float_output = model(x).numpy()
        reference = ex.quantize(model, (x,), calibration, get_default_qconfig_mapping(mapping or "qnnpack"))
        reference_output = reference(x).numpy()
        float_error = float(np.abs(reference_output - float_output).mean() / np.abs(float_output).mean())
        program = ex.export(reference, (x,), name=name)
        step = program.quantization["outputs"][0]["scale"]
        for engine in ENGINES:
            quantized = pytorch_quantized(model, engine, mapping or engine, x, calibration)
            output = quantized(x).numpy()
            engine_reference = ex.quantize(model, (x,), calibration, get_default_qconfig_mapping(mapping or engine))
            engine_step = ex.export(engine_reference, (x,)).quantization["outputs"][0]["scale"]
            rows.append((f"PyTorch quantized, {engine}", median_ms(lambda: quantized(x), runs),
                         export_contract.distance(output, engine_reference(x).numpy(), engine_step)))
    path = os.path.join(workdir, name + ".etp")
    program.save(path)
    loaded = et_ops.load(path)
    inputs = [x.numpy()]
    (output,) = loaded.run(inputs)
    rows.append(("et_ops (portable + quantized kernels)", median_ms(lambda: loaded.run(inputs), runs),
                 export_contract.distance(output, reference_output, step)))
    optimized = ex.export(reference, (x,), name=name, backend="xnnpack")
    optimized_path = os.path.join(workdir, name + "_xnnpack.etp")
    optimized.save(optimized_path)
    times, fast_output, conversions = time_xnnpack_program(optimized_path, x, runs, workdir)
    for threads in (1, 2):
        rows.append((f"et_ops xnnpack, {threads} thread{'s' if threads > 1 else ''}", times[threads],
                     export_contract.distance(fast_output, reference_output, step)))
    return {"model": name, "input": list(shape), "mapping": mapping or "qnnpack", "float_error": float_error,
            "program_bytes": len(program.to_bytes()),
            "xnnpack_program_bytes": len(optimized.to_bytes()), "xnnpack_layout_conversions": conversions,
            "rows": [{"what": what, "ms": ms, "distance": None if d is None else str(d)} for what, ms, d in rows]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default=DEFAULT_MODELS, help=f"from {', '.join(ARCHITECTURES)}")
    parser.add_argument("--size", type=int, default=224, help="image size of the torchvision models")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--chart", help="also draw the latencies to this PNG (python3-matplotlib)")
    parser.add_argument("--mapping", choices=("qnnpack", "x86", "fbgemm"),
                        help="quantize every row with this qconfig mapping (default: each PyTorch engine its own, "
                             "et_ops qnnpack's)")
    parser.add_argument("--isa", choices=isa_cap.CHOICES, default="native",
                        help="avx2: cap PyTorch (oneDNN, aten), XNNPACK and the kernel sets' SIMD paths to AVX2, as on an "
                             "AVX2-only machine")
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        for name in args.models.split(","):
            result = measure(name, args.size, args.runs, workdir, args.mapping)
            results.append(result)
            eager = result["rows"][0]["ms"]
            print(f"\n{name}, input {result['input']}; programs {result['program_bytes']} bytes (reference), "
                  f"{result['xnnpack_program_bytes']} bytes (xnnpack, {result['xnnpack_layout_conversions']} layout "
                  f"conversion{'' if result['xnnpack_layout_conversions'] == 1 else 's'} a run)")
            print(f"  et_ops programs from the {result['mapping']} mapping; its reference quantized model is "
                  f"{100 * result['float_error']:.2f} % from the float model (mean |difference| / mean |float|)")
            print(f"  {'':40} {'ms':>9} {'vs eager':>9}  distance from its reference model")
            for row in result["rows"]:
                print(f"  {row['what']:40} {row['ms']:9.2f} {eager / row['ms']:8.2f}x  {row['distance'] or ''}")
            best = min((row for row in result["rows"] if row["what"].startswith("PyTorch quantized")),
                       key=lambda row: row["ms"], default=None)
            fast = next(row for row in result["rows"] if row["what"] == "et_ops xnnpack, 1 thread")
            if best is not None:
                print(f"  et_ops xnnpack on one thread is {best['ms'] / fast['ms']:.2f}x as fast as "
                      f"{best['what']} (the fastest PyTorch quantized engine)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    if args.chart:
        draw_chart(results, args.chart)
    return 0


def draw_chart(results, path):
    """One group of bars per model: every row's latency, PyTorch's and et_ops'."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    whats = [row["what"] for row in results[0]["rows"]]
    fig, axes = plt.subplots(1, len(results), figsize=(5.5 * len(results), 4.2), squeeze=False)
    for axis, result in zip(axes[0], results):
        times = [row["ms"] for row in result["rows"]]
        colors = ["#999999" if w.startswith("PyTorch") else "#1f77b4" for w in whats]
        bars = axis.barh(range(len(whats)), times, color=colors)
        axis.set_yticks(range(len(whats)))
        axis.set_yticklabels(whats, fontsize=8)
        axis.invert_yaxis()
        axis.set_xscale("log")
        axis.set_xlabel("ms per run (batch 1, log scale)")
        axis.set_title(f"{result['model']} {result['input'][2]}x{result['input'][3]}")
        for bar, ms in zip(bars, times):
            axis.text(bar.get_width(), bar.get_y() + bar.get_height() / 2, f" {ms:.1f}", va="center", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
