"""Which int8 engine for the optimized kernel set: XNNPACK, oneDNN and
PyTorch 1.13's own quantized engines on the convolutions and linears of
ResNet18 and MobileNetV2 (224x224, batch 1), measured in one run.

    /usr/bin/python3 bench/int8_engines_torch.py BUILD/bench/int8_engines_bench \\
        [--isa native|avx2] [--repetitions N] [--min-time S]

For the instruction set chosen (avx2: what users' machines have; this caps
oneDNN, PyTorch's onednn engine and XNNPACK's microkernel choice), it

  1. checks the bench's layer table against torchvision's models,
  2. has the bench write every layer's operands and each engine's uint8
     outputs, and compares them element by element with PyTorch's quantized
     convolution (onednn and qnnpack engines) on the same bytes, and with the
     exact result (integer accumulation, the float32 multiplier
     input_scale * weight_scale / output_scale, rounding half to even),
  3. times every layer on each engine (the bench), and on PyTorch's onednn
     and qnnpack engines and its float convolution (here), one thread, and
  4. prints per-layer times and GOP/s, network totals weighted by how often
     each shape occurs, two-thread scaling, and the layout and quantize
     conversions a program would pay around int8 layers.

Times are the fastest of the repetitions: on a shared machine, other work
only ever adds time. PyTorch is timed in a child process with
torch.set_num_threads(1) and ONEDNN_MAX_CPU_ISA / ATEN_CPU_CAPABILITY set for
the instruction set, so its oneDNN runs on the same instructions as the
bench's.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time

ENGINES = ("xnnpack_qs8", "xnnpack_qc8", "xnnpack_qu8", "onednn_nhwc", "onednn_blocked")
TORCH_ENGINES = ("torch_onednn", "torch_qnnpack", "torch_float")
NETWORKS = ("resnet18", "mobilenet_v2")


# ----------------------------------------------------------------------------
# PyTorch side (runs in a child process whose environment caps the ISA)

def torchvision_shapes():
    """{(network, module): (kind, in, out, kernel, stride, padding, groups, in_size, count)} from torchvision."""
    import torch
    import torchvision
    result = {}
    for network in NETWORKS:
        model = getattr(torchvision.models, network)().eval()
        first = collections.OrderedDict()

        def hook(module, inputs, _output):
            x = inputs[0]
            if isinstance(module, torch.nn.Conv2d):
                key = ("conv", module.in_channels, module.out_channels, module.kernel_size[0], module.stride[0],
                       module.padding[0], module.groups, x.shape[2])
            else:
                key = ("linear", module.in_features, module.out_features, 1, 1, 0, 1, 1)
            first.setdefault(key, []).append(module._bench_name)

        for name, module in model.named_modules():
            if isinstance(module, (torch.nn.Conv2d, torch.nn.Linear)):
                module._bench_name = name
                module.register_forward_hook(hook)
        with torch.no_grad():
            model(torch.zeros(1, 3, 224, 224))
        for key, names in first.items():
            result[(network, names[0])] = key + (len(names),)
    return result


def check_table(layers):
    expected = torchvision_shapes()
    actual = {(l["network"], l["module"]): (l["kind"], l["in_channels"], l["out_channels"], l["kernel"], l["stride"],
                                            l["padding"], l["groups"], l["in_size"], l["count"]) for l in layers}
    if actual != expected:
        missing = sorted(set(expected.items()) - set(actual.items()))
        extra = sorted(set(actual.items()) - set(expected.items()))
        raise SystemExit(f"the bench's layer table differs from torchvision's models:\n"
                         f"  missing or different: {missing}\n  not in torchvision: {extra}")


def torch_operands(case, engine):
    """PyTorch's quantized input and packed weights for one dumped case."""
    import numpy as np
    import torch
    layer = case["layer"]
    x = torch.from_numpy(np.load(case["input"]))
    w = torch.from_numpy(np.load(case["weight"]))
    bias_q = np.load(case["bias"]).astype(np.float64)
    w_scales = np.array(case["weight_scales_values"], dtype=np.float64)
    x_scale = case["input_scale"]
    # A float bias that PyTorch quantizes back to exactly bias_q (its scale
    # is input_scale * weight_scale[o]).
    bias = torch.from_numpy((bias_q * np.float32(x_scale) * w_scales.astype(np.float32)).astype(np.float32))
    xq = torch._make_per_tensor_quantized_tensor(x, x_scale, case["input_zero_point"])
    if case["weight_scales"] == "per_tensor":
        wq = torch._make_per_tensor_quantized_tensor(w, float(w_scales[0]), 0)
    else:
        wq = torch._make_per_channel_quantized_tensor(w, torch.from_numpy(w_scales),
                                                      torch.zeros(len(w_scales), dtype=torch.int64), 0)
    torch.backends.quantized.engine = engine
    if layer["kind"] == "linear":
        packed = torch.ops.quantized.linear_prepack(wq.reshape(wq.shape[0], -1), bias)
        xq = xq.reshape(1, -1)
        run = lambda: torch.ops.quantized.linear(xq, packed, case["output_scale"], case["output_zero_point"])
    else:
        xq = xq.contiguous(memory_format=torch.channels_last)
        s, p = layer["stride"], layer["padding"]
        packed = torch.ops.quantized.conv2d_prepack(wq, bias, [s, s], [p, p], [1, 1], layer["groups"])
        run = lambda: torch.ops.quantized.conv2d(xq, packed, case["output_scale"], case["output_zero_point"])
    return run


def exact_output(case):
    """Integer accumulation, PyTorch's float32 multiplier, rounding half to even."""
    import numpy as np
    import torch
    layer = case["layer"]
    x = np.load(case["input"]).astype(np.float64) - case["input_zero_point"]
    w = np.load(case["weight"]).astype(np.float64)
    acc = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), None, layer["stride"],
                                     layer["padding"], 1, layer["groups"]).numpy()  # exact in float64
    acc += np.load(case["bias"]).reshape(1, -1, 1, 1)
    scales = (np.float32(case["input_scale"]) * np.array(case["weight_scales_values"], dtype=np.float32)
              / np.float32(case["output_scale"])).astype(np.float32)
    out = np.rint(acc * scales.astype(np.float64).reshape(1, -1, 1, 1)) + case["output_zero_point"]
    return np.clip(out, 0, 255).astype(np.uint8)


def seven_bit(case, directory):
    """The same case with activations in [0, 127], as PyTorch's reduce_range=True observers give."""
    import numpy as np
    path = os.path.join(directory, "input7_" + os.path.basename(case["input"]))
    np.save(path, np.load(case["input"]) >> 1)
    return dict(case, input=path, input_zero_point=case["input_zero_point"] >> 1)


def compare(case, outputs):
    """{engine|reference: [differing elements, largest |difference|, elements]}."""
    import numpy as np
    references = {"exact": exact_output(case)}
    for engine in ("onednn", "qnnpack"):
        references["torch_" + engine] = torch_operands(case, engine)().int_repr().numpy().reshape(
            references["exact"].shape)
    engines = {name: path for name, path in outputs.items() if not name.endswith("_2_threads")}
    engines.update({name: ref for name, ref in references.items() if name != "exact"})
    result = {}
    for engine, value in engines.items():
        value = np.load(value) if isinstance(value, str) else value
        for ref_name, ref in references.items():
            diff = np.abs(value.astype(np.int32) - ref.astype(np.int32))
            result[f"{engine}|{ref_name}"] = [int((diff != 0).sum()), int(diff.max()), int(diff.size)]
    # Whether oneDNN's u8 x s8 convolution kernels are exact when activations
    # have 7 bits (PyTorch's quantized linear on onednn is left out: it
    # differs from the exact result on its own).
    if case["layer"]["kind"] != "conv":
        return result
    with tempfile.TemporaryDirectory() as d:
        narrow = seven_bit(case, d)
        diff = np.abs(torch_operands(narrow, "onednn")().int_repr().numpy().reshape(references["exact"].shape)
                      .astype(np.int32) - exact_output(narrow).astype(np.int32))
        result["torch_onednn_7bit_input_convs|exact"] = [int((diff != 0).sum()), int(diff.max()), int(diff.size)]
    return result


def fastest_seconds(fn, repetitions, min_time):
    """Fastest mean over `repetitions` batches of calls lasting about min_time each."""
    for _ in range(3):
        fn()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < min_time / 4:
        fn()
        calls += 1
    per_batch = max(1, int(calls * 4))
    best = float("inf")
    for _ in range(repetitions):
        start = time.perf_counter()
        for _ in range(per_batch):
            fn()
        best = min(best, (time.perf_counter() - start) / per_batch)
    return best


def float_conv(case):
    import numpy as np
    import torch
    layer = case["layer"]
    x = torch.from_numpy(np.load(case["input"]).astype(np.float32))
    w = torch.from_numpy(np.load(case["weight"]).astype(np.float32))
    b = torch.zeros(w.shape[0])
    if layer["kind"] == "linear":
        x, w = x.reshape(1, -1), w.reshape(w.shape[0], -1)
        return lambda: torch.nn.functional.linear(x, w, b)
    return lambda: torch.nn.functional.conv2d(x, w, b, layer["stride"], layer["padding"], 1, layer["groups"])


def worker(dump_dir, repetitions, min_time):
    import torch
    torch.set_num_threads(1)
    manifest = json.load(open(os.path.join(dump_dir, "manifest.json")))
    check_table([case["layer"] for case in manifest["cases"]])
    comparisons, times = {}, {}
    for case in manifest["cases"]:
        layer = case["layer"]
        comparisons[f"{layer['id']}|{case['weight_scales']}"] = compare(case, case["outputs"])
        # Timed with per-channel weights (PyTorch's onednn and x86 default;
        # qnnpack's per-tensor default costs the same in its kernels).
        if case["weight_scales"] == "per_channel":
            with torch.no_grad():
                for engine in ("onednn", "qnnpack"):
                    times[f"torch_{engine}|{layer['id']}"] = fastest_seconds(torch_operands(case, engine),
                                                                             repetitions, min_time)
                times[f"torch_float|{layer['id']}"] = fastest_seconds(float_conv(case), repetitions, min_time)
    # The cost of calling an operator at all: a quantized 1x1 convolution of
    # one channel on one pixel.
    tiny = {"layer": {"kind": "conv", "stride": 1, "padding": 0, "groups": 1}}
    import numpy as np
    with tempfile.TemporaryDirectory() as d:
        for name, value in (("input", np.ones((1, 1, 1, 1), np.uint8)), ("weight", np.ones((1, 1, 1, 1), np.int8)),
                            ("bias", np.zeros(1, np.int32))):
            np.save(os.path.join(d, name + ".npy"), value)
            tiny[name] = os.path.join(d, name + ".npy")
        tiny.update(input_scale=0.1, input_zero_point=0, weight_scales="per_tensor", weight_scales_values=[0.1],
                    output_scale=0.1, output_zero_point=0)
        with torch.no_grad():
            for engine in ("onednn", "qnnpack"):
                times[f"torch_{engine}|call"] = fastest_seconds(torch_operands(tiny, engine), repetitions, min_time)
    json.dump({"comparisons": comparisons, "times": times, "torch": torch.__version__}, sys.stdout)


# ----------------------------------------------------------------------------
# Driver

def bench_json(bench, isa, repetitions, min_time, benchmark_filter):
    # Repetitions interleaved at random across benchmarks, so that a burst of
    # other work on the machine hits every engine alike.
    command = [bench, f"--isa={isa}", f"--benchmark_filter={benchmark_filter}", "--benchmark_format=json",
               f"--benchmark_repetitions={repetitions}", f"--benchmark_min_time={min_time}",
               "--benchmark_enable_random_interleaving=true"]
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def fastest(report):
    """{benchmark name: (fastest real time in seconds, label)}."""
    result = {}
    for b in report["benchmarks"]:
        if b.get("run_type") != "iteration":
            continue
        name = b["run_name"].removesuffix("/real_time")
        seconds = b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
        if name not in result or seconds < result[name][0]:
            result[name] = (seconds, b.get("label", ""))
    return result


def torch_environment(isa):
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if isa == "avx2":
        env.update(ONEDNN_MAX_CPU_ISA="AVX2", DNNL_MAX_CPU_ISA="AVX2", ATEN_CPU_CAPABILITY="avx2")
    return env


def layer_times(layers, bench_times, torch_times):
    """{engine: {layer id: seconds}} for one thread."""
    result = collections.defaultdict(dict)
    for layer in layers:
        for engine in ENGINES:
            result[engine][layer["id"]] = bench_times[f"conv/{engine}/threads:1/{layer['id']}"][0]
        for engine in TORCH_ENGINES:
            result[engine][layer["id"]] = torch_times[f"{engine}|{layer['id']}"]
    return result


def network_total(layers, times, network):
    return sum(layer["count"] * times[layer["id"]] for layer in layers if layer["network"] == network)


def print_layers(layers, times):
    engines = ENGINES + TORCH_ENGINES
    short = [e.replace("xnnpack_", "xnn_").replace("torch_", "pt_") for e in engines]
    print("Per layer, one thread: microseconds (GOP/s), fastest of the repetitions")
    print(f"| layer | n | MMAC | " + " | ".join(short) + " |")
    print("|---|--:|--:|" + "--:|" * len(engines))
    for layer in layers:
        cells = []
        for engine in engines:
            t = times[engine][layer["id"]]
            cells.append(f"{t * 1e6:.0f} ({2 * layer['macs'] / t * 1e-9:.0f})")
        print(f"| {layer['id']} | {layer['count']} | {layer['macs'] / 1e6:.1f} | " + " | ".join(cells) + " |")


def print_networks(layers, times, bench_times, torch_times):
    print("\nWhole network (sum over every conv and linear, weighted by occurrences), one thread, ms")
    engines = ENGINES + TORCH_ENGINES
    print("| network | GMAC | " + " | ".join(engines) + " |")
    print("|---|--:|" + "--:|" * len(engines))
    for network in NETWORKS:
        macs = sum(l["count"] * l["macs"] for l in layers if l["network"] == network)
        cells = [f"{network_total(layers, times[e], network) * 1e3:.2f}" for e in engines]
        print(f"| {network} | {macs / 1e9:.2f} | " + " | ".join(cells) + " |")
    print(f"\nPyTorch's cost of one operator call (1x1 conv, 1 channel, 1 pixel): "
          f"onednn {torch_times['torch_onednn|call'] * 1e6:.1f} us, "
          f"qnnpack {torch_times['torch_qnnpack|call'] * 1e6:.1f} us")

    print("\nTwo threads (pthreadpool for XNNPACK, OpenMP for oneDNN): network ms and speedup over one thread")
    print("| network | xnnpack_qs8 1t | 2t | speedup | onednn_nhwc 1t | 2t | speedup |")
    print("|---|--:|--:|--:|--:|--:|--:|")
    for network in NETWORKS:
        cells = []
        for engine in ("xnnpack_qs8", "onednn_nhwc"):
            one, two = (sum(l["count"] * bench_times[f"conv/{engine}/threads:{t}/{l['id']}"][0]
                            for l in layers if l["network"] == network) for t in (1, 2))
            cells += [f"{one * 1e3:.2f}", f"{two * 1e3:.2f}", f"{one / two:.2f}x"]
        print(f"| {network} | " + " | ".join(cells) + " |")


def print_conversions(layers, bench_times, times):
    """Per network: converting every int8 layer's input and output."""
    kinds = {
        "transpose u8 NCHW->NHWC + NHWC->NCHW (plain loop)":
            ("layout/transpose_u8_nchw_to_nhwc", "layout/transpose_u8_nhwc_to_nchw"),
        "quantize f32 NCHW->u8 NHWC + dequantize back (oneDNN reorder)":
            ("layout/onednn_f32_nchw_to_u8_nhwc", "layout/onednn_u8_nhwc_to_f32_nchw"),
        "quantize f32->s8 + dequantize back, NHWC (XNNPACK convert)":
            ("layout/xnnpack_f32_to_qs8_nhwc", "layout/xnnpack_qs8_to_f32_nhwc"),
    }
    print("\nConversions around every conv/linear (its input one way, its output the other), one thread, ms "
          "(share of the network's XNNPACK qs8 time)")
    print("| network | " + " | ".join(kinds) + " | xnn_setup every run |")
    print("|---|" + "--:|" * (len(kinds) + 1))
    for network in NETWORKS:
        base = network_total(layers, times["xnnpack_qs8"], network)
        cells = []
        for inward, outward in kinds.values():
            total = 0.0
            for l in layers:
                if l["network"] != network:
                    continue
                in_shape = f"{l['in_channels']}x{l['in_size']}x{l['in_size']}"
                out_shape = f"{l['out_channels']}x{l['out_size']}x{l['out_size']}"
                total += l["count"] * (bench_times[f"{inward}/{in_shape}"][0] + bench_times[f"{outward}/{out_shape}"][0])
            cells.append(f"{total * 1e3:.2f} ({100 * total / base:.0f}%)")
        setup = sum(l["count"] * bench_times[f"setup/xnnpack_qs8/{l['id']}"][0] for l in layers if l["network"] == network)
        cells.append(f"{setup * 1e3:.3f} ({100 * setup / base:.1f}%)")
        print(f"| {network} | " + " | ".join(cells) + " |")


def print_numerics(comparisons):
    """Per engine and reference: layers bitwise equal, differing elements, largest difference."""
    print("\nNumerics: layers whose uint8 outputs are bitwise equal to the reference (of 43), differing elements "
          "(of all outputs), largest difference in output steps")
    references = ("exact", "torch_onednn", "torch_qnnpack")
    for scales in ("per_tensor", "per_channel"):
        totals = collections.defaultdict(lambda: [0, 0, 0, 0])  # equal layers, differing, elements, max
        for key, result in comparisons.items():
            if not key.endswith("|" + scales):
                continue
            for name, (differing, largest, size) in result.items():
                t = totals[name]
                t[0] += differing == 0
                t[1] += differing
                t[2] += size
                t[3] = max(t[3], largest)
        engines = sorted({name.split("|")[0] for name in totals}, key=lambda e: (e.startswith("torch"), e))
        print(f"\n{scales} weights")
        print("| engine | " + " | ".join(f"vs {r}" for r in references) + " |")
        print("|---|" + "---|" * len(references))
        for engine in engines:
            cells = []
            for ref in references:
                t = totals.get(f"{engine}|{ref}")
                cells.append(f"{t[0]} equal, {t[1]} diff ({100 * t[1] / t[2]:.3f}%), max {t[3]}" if t else "")
            print(f"| {engine} | " + " | ".join(cells) + " |")


def compare_isas(native_dir, avx2_dir):
    """{engine: [cases with equal bytes, cases, differing elements]} between the two dumps."""
    import numpy as np
    manifests = [json.load(open(os.path.join(d, "manifest.json"))) for d in (native_dir, avx2_dir)]
    result = collections.defaultdict(lambda: [0, 0, 0])
    for native, avx2 in zip(manifests[0]["cases"], manifests[1]["cases"]):
        for engine, path in native["outputs"].items():
            differing = int((np.load(path) != np.load(avx2["outputs"][engine])).sum())
            r = result[engine]
            r[0] += differing == 0
            r[1] += 1
            r[2] += differing
    return {"native_isa": manifests[0]["onednn_isa"], "engines": dict(result)}


def compare_threads(dump_dir):
    """{engine: [cases with equal bytes, cases, differing elements]}: two threads against one."""
    import numpy as np
    result = collections.defaultdict(lambda: [0, 0, 0])
    for case in json.load(open(os.path.join(dump_dir, "manifest.json")))["cases"]:
        for engine, path in case["outputs"].items():
            if engine.endswith("_2_threads"):
                one = engine.removesuffix("_2_threads")
                differing = int((np.load(path) != np.load(case["outputs"][one])).sum())
                r = result[one]
                r[0] += differing == 0
                r[1] += 1
                r[2] += differing
    return dict(result)


def print_threads(threads):
    print("\nSame bytes with two threads as with one?")
    print("| engine | cases with equal outputs | differing elements |")
    print("|---|--:|--:|")
    for engine, (equal, cases, differing) in sorted(threads.items()):
        print(f"| {engine} | {equal} of {cases} | {differing} |")


def print_across_isas(across):
    print(f"\nSame bytes with AVX2 only and with everything this CPU has (oneDNN: {across['native_isa']}; "
          f"XNNPACK: AVX-512 microkernels)?")
    print("| engine | cases with equal outputs | differing elements |")
    print("|---|--:|--:|")
    for engine, (equal, cases, differing) in sorted(across["engines"].items()):
        print(f"| {engine} | {equal} of {cases} | {differing} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", help="path of the int8_engines_bench executable")
    parser.add_argument("--isa", choices=("native", "avx2"), default="avx2")
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--min-time", type=float, default=0.05, help="seconds per repetition of one layer")
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args.repetitions, args.min_time)

    layers = json.loads(subprocess.run([args.bench, "--list-layers"], check=True, capture_output=True,
                                       text=True).stdout)
    with tempfile.TemporaryDirectory() as native_dir, tempfile.TemporaryDirectory() as avx2_dir:
        dumps = {"native": native_dir, "avx2": avx2_dir}
        for isa, directory in dumps.items():
            subprocess.run([args.bench, f"--isa={isa}", f"--dump={directory}"], check=True)
        across_isas = compare_isas(native_dir, avx2_dir)
        dump_dir = dumps[args.isa]
        threads = compare_threads(dump_dir)
        manifest = json.load(open(os.path.join(dump_dir, "manifest.json")))
        torch_result = json.loads(subprocess.run(
            [sys.executable, __file__, args.bench, f"--worker={dump_dir}", f"--repetitions={args.repetitions}",
             f"--min-time={args.min_time}"], check=True, capture_output=True, text=True,
            env=torch_environment(args.isa)).stdout)
    bench_times = fastest(bench_json(args.bench, args.isa, args.repetitions, args.min_time, "^(conv|setup)/"))
    report = bench_json(args.bench, args.isa, args.repetitions, args.min_time / 5, "^layout/")
    bench_times.update(fastest(report))
    times = layer_times(layers, bench_times, torch_result["times"])

    implementations = sorted({case["onednn_implementations"].split(", ")[0] for case in manifest["cases"]})
    print(f"ISA: {args.isa}; oneDNN runs on {manifest['onednn_isa']} ({', '.join(implementations)}); "
          f"PyTorch {torch_result['torch']}; {report['context'].get('host_name', '')}, "
          f"{report['context']['num_cpus']} CPUs at {report['context']['mhz_per_cpu']} MHz")
    print(f"one thread, batch 1; {args.repetitions} repetitions of >= {args.min_time} s per layer\n")
    print_layers(layers, times)
    print_networks(layers, times, bench_times, torch_result["times"])
    print_conversions(layers, bench_times, times)
    print_numerics(torch_result["comparisons"])
    print_across_isas(across_isas)
    print_threads(threads)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"isa": args.isa, "layers": layers, "bench": bench_times, "torch": torch_result,
                       "across_isas": across_isas, "threads": threads}, f, indent=1)


if __name__ == "__main__":
    main()
