"""The streaming sweep of quantized_bench, as ratios measured in one run.

    /usr/bin/python3 bench/streaming_sweep.py BUILD/bench/quantized_bench [--simd_target=AVX2]
        [--repetitions N] [--rounds N] [--operation quantize|dequantize]

For quantize f32 -> i8 and dequantize i8 -> f32 at 64Ki to 64Mi elements it
prints, per size, the time of et_ops as the library decides (default
threshold: the machine's last-level cache), whether that size streamed, and
et_ops's speed relative to memcpy of the same bytes, to et_ops with
ordinary and with non-temporal stores forced, and to a plain loop compiled
with the same flags (what a kernel library without hand-written SIMD
ships). A ratio above 1 means et_ops is faster. Each time is the fastest of
the repetitions over --rounds separate runs of the whole sweep (a shared
machine's load drifts over minutes, and other work only ever adds time).
"""

import argparse
import json
import subprocess
import sys

OPERATIONS = ("quantize", "dequantize")
VARIANTS = {
    "default": "BM_sweep_{op}<Stores::kDefault>",
    "non_temporal": "BM_sweep_{op}<Stores::kNonTemporal>",
    "ordinary": "BM_sweep_{op}<Stores::kOrdinary>",
    "plain_loop": "BM_sweep_{op}_plain_loop",
    "memcpy": "BM_sweep_{op}_memcpy",
}
BYTES_PER_ELEMENT = {"quantize": 4 + 1, "dequantize": 1 + 4}


def run(bench, extra, repetitions, operations):
    command = [bench, f"--benchmark_filter=BM_sweep_({'|'.join(operations)})", "--benchmark_format=json",
               f"--benchmark_repetitions={repetitions}", "--benchmark_min_time=0.1"] + extra
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def fastest(reports):
    """{(benchmark name, elements): (fastest real time in ns, threshold bytes or None)}."""
    result = {}
    for b in (b for report in reports for b in report["benchmarks"]):
        if b.get("run_type") != "iteration":
            continue
        name, _, elements = b["run_name"].rpartition("/")
        ns = b["real_time"] * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
        key = (name, int(elements))
        if key not in result or ns < result[key][0]:
            result[key] = (ns, b.get("threshold_bytes"))
    return result


def table(times, op):
    sizes = sorted(n for (name, n) in times if name == VARIANTS["default"].format(op=op))
    rows = [f"{op} ({'f32 -> i8' if op == 'quantize' else 'i8 -> f32'}), one thread",
            f"{'elements':>10} {'MiB moved':>9} {'et_ops ms':>9} {'streams':>7} {'/memcpy':>8} "
            f"{'/ordinary':>9} {'/non-temp':>9} {'/plain':>7}"]
    for n in sizes:
        t = {key: times[(pattern.format(op=op), n)][0] for key, pattern in VARIANTS.items()}
        threshold = times[(VARIANTS["default"].format(op=op), n)][1]
        moved = n * BYTES_PER_ELEMENT[op]
        streams = "yes" if threshold is not None and moved >= threshold else "no"
        rows.append(f"{n:>10} {moved / 2**20:>9.1f} {t['default'] / 1e6:>9.3f} {streams:>7} "
                    f"{t['memcpy'] / t['default']:>8.2f} {t['ordinary'] / t['default']:>9.2f} "
                    f"{t['non_temporal'] / t['default']:>9.2f} {t['plain_loop'] / t['default']:>7.2f}")
    return "\n".join(rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("bench", help="path of the quantized_bench executable")
    parser.add_argument("--simd_target", help="Highway target to force (AVX3, AVX2, SSE4, ...)")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--operation", choices=OPERATIONS, action="append",
                        help="quantize or dequantize (default: both)")
    args = parser.parse_args()
    operations = args.operation or list(OPERATIONS)
    extra = [f"--simd_target={args.simd_target}"] if args.simd_target else []
    reports = [run(args.bench, extra, args.repetitions, operations) for _ in range(args.rounds)]
    report = reports[0]
    caches = ", ".join(f"L{c['level']} {c['type']} {c['size'] // 1024} KiB" for c in report["context"]["caches"])
    print(f"caches: {caches}; SIMD target: {args.simd_target or 'best available'}")
    print("ratios are time of the reference / time of et_ops (above 1: et_ops is faster)\n")
    times = fastest(reports)
    for op in operations:
        print(table(times, op))
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
