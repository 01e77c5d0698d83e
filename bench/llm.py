"""Language-model generation speed: et_ops beside PyTorch and beside the machine's limits, measured in one run.

    PYTHONPATH=build/src/python /usr/bin/python3 bench/llm.py [--build build]
        [--models stories110m,tinyllama] [--schemes int8,int4,8da4w] [--threads 1,2]
        [--prompt 128] [--new 128] [--runs 2] [--programs DIR] [--memory-seq-len 2048]
        [--cache-dtype float32|float16|bfloat16] [--json FILE] [--chart FILE.png] [--isa=native|avx2]

Llama-shaped models with random weights (examples/language_model/model.py,
the form `et_ops.export.export_llm` exports), at two sizes:

- stories110m: dim 768, 12 layers, 12 heads, FFN 2048, vocabulary 32000,
  an untied output layer (134M parameters);
- tinyllama: dim 2048, 22 layers, 32 heads / 4 key-value heads, FFN 5632,
  vocabulary 32000 (1.1B parameters).

The key/value cache holds --cache-dtype elements (float32 by default; a
16-bit cache halves its bytes, in PyTorch's runs too).

For each, a prompt of --prompt random tokens runs in one run (prefill),
then --new - 1 single-token runs (decode, greedy), on each --threads count:

- PyTorch eager float32 with the same key/value cache (the system BLAS:
  install libopenblas0-pthread to measure PyTorch at its best; the BLAS in
  use is printed);
- PyTorch's dynamic int8 quantization of the same model
  (torch.ao.quantization.quantize_dynamic of every nn.Linear) on each of
  engines this build has (onednn, qnnpack in Debian's);
- et_ops: the model exported with export_llm(..., scheme=S, group_size=32)
  for each --schemes S (low-bit linears of the quantized kernel set),
  through et_ops.generate.

Beside them, two limits measured in the same run by build/bench/lowbit_bench:
memcpy's bandwidth (bytes read plus written, a copy far larger than the
caches; the larger of a measurement before and after the models; printed
beside what one thread's loads of the kernels' vector width alone read)
and the
u8 x s8 multiply-add peak of the instructions the int8 kernels use (a
register-only loop, one thread, 2 operations per product). The decode
limit of a program is that bandwidth over the weight bytes one token reads
(every constant but the embedding table, of which a token reads one row);
the prefill limit is that peak over the multiply-adds of the linear layers
(2 * parameters of the linears per token). Each et_ops figure is printed
with its share of its limit, for one thread (the limits are one thread's).

Also reported per program: the bytes resident after it loads (the
prepared layouts of the low-bit linears are copies; every other constant
stays in the mapped file), and the memory of a run state for
--memory-seq-len positions (stories110m) beside its minimum: the
key/value cache plus the most activation bytes one run of --memory-seq-len
tokens has live at once.

Each time is the best of --runs runs (a busy machine only ever slows a
run down). --isa=avx2 measures what an AVX2 machine gets: the kernels'
SIMD paths (ET_OPS_SIMD_MAX_ISA), PyTorch's kernels and oneDNN capped to
AVX2, the multiply-add peak of AVX2's instructions. --chart draws the
tokens per second as a bar chart (python3-matplotlib); docs/performance.md
shows one. A --models of `tiny` runs a small model in seconds, to check
the script.
"""

import os
import sys

import isa_cap  # noqa: E402  (bench/isa_cap.py, beside this script)

isa_cap.apply(sys.argv)  # before torch and the kernels load

import argparse
import contextlib
import copy
import json
import subprocess
import tempfile
import time

import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "language_model"))
import model as llama  # noqa: E402  (examples/language_model/model.py)

import et_ops  # noqa: E402
import et_ops.export as ex  # noqa: E402

SHAPES = {
    "stories110m": dict(dim=768, n_layers=12, n_heads=12, n_kv_heads=12, hidden=2048, vocab_size=32000),
    "tinyllama": dict(dim=2048, n_layers=22, n_heads=32, n_kv_heads=4, hidden=5632, vocab_size=32000),
    "tiny": dict(dim=128, n_layers=2, n_heads=4, n_kv_heads=2, hidden=384, vocab_size=512),
}
EMBEDDING_OPERATORS = ("quantized_decomposed::embedding_4bit.out", "quantized_decomposed::embedding_byte.out",
                       "aten::embedding.out")
GROUP_SIZE = 32
TORCH_ENGINES = [e for e in ("x86", "fbgemm", "onednn", "qnnpack") if e in torch.backends.quantized.supported_engines]


CACHE_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def make_model(shape, max_seq_len, cache_dtype):
    torch.manual_seed(0)
    s = dict(SHAPES[shape])
    vocab = s.pop("vocab_size")
    model = llama.Llama(vocab, max_seq_len=max_seq_len, cache_dtype=CACHE_DTYPES[cache_dtype], **s).eval()
    with torch.no_grad():  # embeddings of the scale a trained model's have, so activations stay moderate
        model.tok_embeddings.weight.mul_(0.02)
    return model


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def linear_parameters(model):
    return sum(m.weight.numel() for m in model.modules() if isinstance(m, nn.Linear))


# --- the limits ------------------------------------------------------------------------------------------------

def limits(lowbit_bench, isa):
    """memcpy bytes/s (read + written), one thread's read bytes/s and the one-thread multiply-add peak (ops/s),
    from lowbit_bench."""
    env = dict(os.environ)
    if isa == "avx2":
        env["ET_OPS_BENCH_TARGET"] = "AVX2"
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([lowbit_bench, "--benchmark_filter=BM_memcpy|BM_read|BM_multiply_add_peak",
                        f"--benchmark_out={out.name}", "--benchmark_out_format=json"],
                       env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        results = json.load(open(out.name))["benchmarks"]
    figure = {b["name"].split("/")[0]: b for b in results}
    return dict(bandwidth=figure["BM_memcpy"]["bytes/s"], read=figure["BM_read"]["bytes/s"],
                peak=figure["BM_multiply_add_peak"]["ops/s"])


# --- PyTorch ---------------------------------------------------------------------------------------------------

def reset_cache(model):
    for name, buffer in model.named_buffers():
        if name.endswith("_cache"):
            buffer.zero_()


def torch_generate(model, prompt, new, threads):
    """(prefill seconds, decode seconds, decode tokens): greedy, as et_ops.generate does."""
    torch.set_num_threads(threads)
    reset_cache(model)
    with torch.no_grad():
        start = time.perf_counter()
        logits = model(torch.tensor([prompt]), torch.arange(len(prompt)))
        token = int(logits[0, -1].argmax())
        prefill = time.perf_counter() - start
        start = time.perf_counter()
        for i in range(new - 1):
            position = len(prompt) + i
            logits = model(torch.tensor([[token]]), torch.tensor([position]))
            token = int(logits[0, -1].argmax())
        decode = time.perf_counter() - start
    return prefill, decode, new - 1


REDUCE_RANGE_WARNING = "qnnpack incorrectly ignores reduce_range"


@contextlib.contextmanager
def reduce_range_warnings_counted():
    """PyTorch's qnnpack engine logs a warning on every dynamic linear call
    (its modules ask for reduce_range, which qnnpack ignores): tens of
    thousands of lines a model. Keep the process's stderr for the span,
    count that warning once and pass every other line through."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            captured.seek(0)
            lines = captured.read().decode(errors="replace").splitlines()
            others = [line for line in lines if REDUCE_RANGE_WARNING not in line
                      and "Logging before InitGoogleLogging" not in line]
            for line in others:
                print(line, file=sys.stderr)
            warned = sum(REDUCE_RANGE_WARNING in line for line in lines)
            if warned:
                print(f"  (PyTorch warned {warned} times that {REDUCE_RANGE_WARNING}: "
                      "its numerics are those of reduce_range=False)", file=sys.stderr, flush=True)


def best(runs, measure):
    """The fastest prefill and the fastest decode of `runs` measurements."""
    results = [measure() for _ in range(runs)]
    return min(r[0] for r in results), min(r[1] for r in results), results[0][2]


# --- et_ops ----------------------------------------------------------------------------------------------------

def export_program(model, shape, scheme, max_seq_len, directory, cache_dtype):
    cache = "" if cache_dtype == "float32" else f"_{cache_dtype}_cache"
    path = os.path.join(directory, f"{shape}_{scheme}_{max_seq_len}{cache}.etp")
    if not os.path.exists(path):
        start = time.perf_counter()
        ex.export_llm(model, max_seq_len, name=f"{shape}_{scheme}", scheme=scheme, group_size=GROUP_SIZE).save(path)
        print(f"  exported {os.path.basename(path)} in {time.perf_counter() - start:.0f} s", flush=True)
    return path


def inspect(et_ops_tool, path):
    result = subprocess.run([et_ops_tool, "inspect", path, "--json"], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def decode_weight_bytes(inspection):
    """Bytes of the constants one decoded token reads: every constant an instruction other than an embedding
    names (an embedding reads one row of its table per token)."""
    read = {}
    for instruction in inspection["instructions"]:
        if instruction["op"] not in EMBEDDING_OPERATORS:
            read.update((a["value_index"], a["nbytes"]) for a in instruction["args"] if a.get("constant"))
    return sum(read.values())


# Run in a fresh process: in this one, memory the PyTorch models freed is reused without growing the resident set.
RESIDENT_SCRIPT = """
import json, sys
import et_ops

def resident():
    fields = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) * 1024
    return fields["RssAnon"], fields["RssFile"]

anon, file = resident()
program = et_ops.load(sys.argv[1])
loaded_anon, loaded_file = resident()
session = program.session()
state_anon, _ = resident()
print(json.dumps(dict(load_anonymous_bytes=loaded_anon - anon, load_file_bytes=loaded_file - file,
                      run_state_bytes=state_anon - loaded_anon)))
"""


def resident_bytes(path):
    """The resident bytes a fresh process gains loading the program, and making one run state."""
    result = subprocess.run([sys.executable, "-c", RESIDENT_SCRIPT, path], check=True, capture_output=True, text=True)
    return json.loads(result.stdout)


def et_ops_generate(program, prompt, new, threads, tokens):
    """Times one generation; `tokens` keeps the new tokens of each thread count, which must be the same."""
    generation = et_ops.generate(program, prompt, new, threads=threads)
    tokens.setdefault(tuple(generation), set()).add(threads)
    if len(tokens) > 1:
        raise SystemExit(f"{program.name}: the new tokens differ between thread counts: {tokens}")
    return generation.prefill_seconds, generation.decode_seconds, generation.decode_tokens


def program_memory(et_ops_tool, path):
    """What a program's inspection and a fresh process loading it say about memory."""
    inspection = inspect(et_ops_tool, path)
    memory = {
        "file_bytes": os.path.getsize(path),
        "decode_weight_bytes": decode_weight_bytes(inspection),
        "planned_memory_bytes": inspection["planned_memory_bytes"],
        "peak_live_bytes": inspection["peak_live_bytes"],
        "state_bytes": sum(s["nbytes"] for s in inspection["state"]),
    }
    memory.update(resident_bytes(path))
    return memory


# --- one model -------------------------------------------------------------------------------------------------

def measure_model(shape, args, directory, et_ops_tool):
    max_seq_len = args.prompt + args.new
    model = make_model(shape, max_seq_len, args.cache_dtype)
    print(f"{shape}: {parameters(model) / 1e6:.0f}M parameters, {linear_parameters(model) / 1e6:.0f}M in linear layers",
          flush=True)
    prompt = torch.randint(0, SHAPES[shape]["vocab_size"], (args.prompt,),
                           generator=torch.Generator().manual_seed(1)).tolist()
    rows = []  # (system, scheme, threads, prefill tok/s, decode tok/s, extra)
    for threads in args.threads:
        prefill, decode, steps = best(args.runs, lambda: torch_generate(model, prompt, args.new, threads))
        rows.append(dict(system="PyTorch eager float32", threads=threads, prefill=args.prompt / prefill,
                         decode=steps / decode))
        print(f"  {rows[-1]['system']}, {threads} thread(s): prefill {rows[-1]['prefill']:.1f} tok/s, "
              f"decode {rows[-1]['decode']:.1f} tok/s", flush=True)
    for engine in TORCH_ENGINES:
        torch.backends.quantized.engine = engine
        quantized = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8)
        for threads in args.threads:
            with reduce_range_warnings_counted():
                prefill, decode, steps = best(args.runs, lambda: torch_generate(quantized, prompt, args.new, threads))
            rows.append(dict(system=f"PyTorch quantize_dynamic int8, {engine}", threads=threads,
                             prefill=args.prompt / prefill, decode=steps / decode))
            print(f"  {rows[-1]['system']}, {threads} thread(s): prefill {rows[-1]['prefill']:.1f} tok/s, "
                  f"decode {rows[-1]['decode']:.1f} tok/s", flush=True)
    memories = {}
    for scheme in args.schemes:
        path = export_program(model, shape, scheme, max_seq_len, directory, args.cache_dtype)
        memories[scheme] = program_memory(et_ops_tool, path)
        program, tokens = et_ops.load(path), {}
        for threads in args.threads:
            prefill, decode, steps = best(args.runs,
                                          lambda: et_ops_generate(program, prompt, args.new, threads, tokens))
            rows.append(dict(system=f"et_ops {scheme}", scheme=scheme, threads=threads, prefill=args.prompt / prefill,
                             decode=steps / decode, ttft=prefill))
            print(f"  {rows[-1]['system']}, {threads} thread(s): prefill {rows[-1]['prefill']:.1f} tok/s "
                  f"(first token after {prefill:.3f} s), decode {rows[-1]['decode']:.1f} tok/s", flush=True)
    result = dict(shape=shape, parameters=parameters(model), linear_parameters=linear_parameters(model),
                  rows=rows, memory=memories)
    if shape != "tinyllama" and args.memory_seq_len:
        result["long_state"] = long_state(model, shape, args.memory_seq_len, directory, et_ops_tool, args.cache_dtype)
    return result


def long_state(model, shape, max_seq_len, directory, et_ops_tool, cache_dtype):
    """The run state of an 8da4w program for max_seq_len positions beside the cache it must hold."""
    long_model = make_model(shape, max_seq_len, cache_dtype)
    long_model.load_state_dict(model.state_dict(), strict=False)
    path = export_program(long_model, shape, "8da4w", max_seq_len, directory, cache_dtype)
    memory = program_memory(et_ops_tool, path)
    s = SHAPES[shape]
    element = torch.finfo(CACHE_DTYPES[cache_dtype]).bits // 8
    memory["cache_bytes"] = 2 * s["n_layers"] * s["n_kv_heads"] * max_seq_len * (s["dim"] // s["n_heads"]) * element
    memory["max_seq_len"] = max_seq_len
    return memory


# --- report ----------------------------------------------------------------------------------------------------

def mb(n):
    return f"{n / 1e6:.1f} MB"


def report(results, limit, isa):
    bandwidth, peak = limit["bandwidth"], limit["peak"]
    print(f"\nlimits ({isa}): memcpy {bandwidth / 1e9:.1f} GB/s (read + written), "
          f"u8 x s8 multiply-add peak {peak / 1e9:.0f} GOP/s (one thread); one thread reads "
          f"{limit['read'] / 1e9:.1f} GB/s through the kernels' vectors ({limit['read'] / bandwidth:.2f} of "
          f"memcpy's figure)")
    for result in results:
        ops_per_token = 2 * result["linear_parameters"]
        prefill_limit = peak / ops_per_token
        print(f"\n{result['shape']} ({result['parameters'] / 1e6:.0f}M parameters): prefill limit "
              f"{prefill_limit:.0f} tok/s (multiply-add peak / {ops_per_token / 1e9:.2f} GOP per token)")
        print(f"{'system':44} {'threads':>7} {'prefill tok/s':>13} {'share':>6} {'decode tok/s':>12} {'share':>6}")
        for row in result["rows"]:
            memory = result["memory"].get(row.get("scheme"))
            decode_limit = bandwidth / memory["decode_weight_bytes"] if memory else None
            row["decode_limit"], row["prefill_limit"] = decode_limit, prefill_limit if memory else None
            shares = (f"{row['prefill'] / prefill_limit:6.2f}", f"{row['decode'] / decode_limit:6.2f}") \
                if memory else ("", "")
            print(f"{row['system']:44} {row['threads']:>7} {row['prefill']:13.1f} {shares[0]:>6} "
                  f"{row['decode']:12.1f} {shares[1]:>6}")
        for scheme, memory in result["memory"].items():
            print(f"et_ops {scheme}: file {mb(memory['file_bytes'])}, "
                  f"a token reads {mb(memory['decode_weight_bytes'])} "
                  f"of weights (decode limit {bandwidth / memory['decode_weight_bytes']:.0f} tok/s); load adds "
                  f"{mb(memory['load_anonymous_bytes'])} anonymous (the prepared layouts), "
                  f"{mb(memory['load_file_bytes'])} of the mapped file resident; a run state "
                  f"{mb(memory['run_state_bytes'])} (planned {mb(memory['planned_memory_bytes'])})")
        goals(result, limit)
        if "long_state" in result:
            m = result["long_state"]
            print(f"run state for N = {m['max_seq_len']} (8da4w): planned {mb(m['planned_memory_bytes'])}, at most "
                  f"{mb(m['peak_live_bytes'])} live at once (the minimum for these instructions), of which the "
                  f"key/value cache {mb(m['state_bytes'])} (expected {mb(m['cache_bytes'])}) and one run of "
                  f"{m['max_seq_len']} tokens' activations {mb(m['peak_live_bytes'] - m['state_bytes'])}; "
                  f"resident after make_state {mb(m['run_state_bytes'])}")


def goals(result, limit):
    """The figures the project's goals are stated in: shares of the limits on one thread, the second thread's
    gain, the time to the first token."""
    read_share = limit["bandwidth"] / limit["read"]
    rows = {(r["system"], r["threads"]): r for r in result["rows"]}
    for scheme in ("8da4w", "int4", "int8"):
        one, two = rows.get((f"et_ops {scheme}", 1)), rows.get((f"et_ops {scheme}", 2))
        if one is None:
            continue
        decode_share = one["decode"] / one["decode_limit"]
        line = (f"goals, et_ops {scheme}: decode {decode_share:.2f} of the bandwidth limit "
                f"({decode_share * read_share:.2f} of one thread's reads), "
                f"prefill {one['prefill'] / one['prefill_limit']:.2f} of the multiply-add peak, first token after "
                f"{one['ttft']:.3f} s (one thread)")
        if two is not None:
            line += (f"; 2 threads: decode {two['decode'] / one['decode']:.2f}x, "
                     f"prefill {two['prefill'] / one['prefill']:.2f}x one thread")
        print(line)


def chart(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(results), 2, figsize=(12, 3.2 * len(results)), squeeze=False)
    for line, result in zip(axes, results):
        for axis, phase in zip(line, ("prefill", "decode")):
            rows = result["rows"]
            labels = [f"{r['system']}, {r['threads']}t" for r in rows]
            colours = ["tab:blue" if r["system"].startswith("et_ops") else "tab:gray" for r in rows]
            axis.barh(labels, [r[phase] for r in rows], color=colours)
            limits = {r[f"{phase}_limit"] for r in rows if r.get(f"{phase}_limit")}
            for limit in limits if phase == "prefill" else []:
                axis.axvline(limit, color="tab:red", linestyle="--", linewidth=1)
            axis.set_title(f"{result['shape']}: {phase} (tokens/s, higher is better)", fontsize=9)
            axis.tick_params(labelsize=7)
            axis.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build", help="the build directory (its tools/et-ops, bench/lowbit_bench)")
    parser.add_argument("--models", default="stories110m,tinyllama", help=f"from {', '.join(SHAPES)}")
    parser.add_argument("--schemes", default="int8,int4,8da4w", help="from " + ", ".join(ex.SCHEMES))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--prompt", type=int, default=128, help="prompt tokens (prefill)")
    parser.add_argument("--new", type=int, default=128, help="new tokens (the first from the prefill)")
    parser.add_argument("--runs", type=int, default=2, help="runs of each figure; the best is kept")
    parser.add_argument("--programs", help="keep the exported programs here and reuse them (default: a temporary "
                        "directory)")
    parser.add_argument("--memory-seq-len", type=int, default=2048,
                        help="the N of the run-state memory report (0: none)")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--chart", help="also draw the speeds to this PNG (python3-matplotlib)")
    parser.add_argument("--isa", choices=isa_cap.CHOICES, default="native")
    parser.add_argument("--cache-dtype", choices=sorted(CACHE_DTYPES), default="float32",
                        help="the key/value cache's elements (default float32)")
    args = parser.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.schemes = args.schemes.split(",")
    for scheme in args.schemes:
        if scheme not in ex.SCHEMES:
            parser.error(f"--schemes: {scheme!r} is not one of {', '.join(ex.SCHEMES)}")
    models = args.models.split(",")
    for shape in models:
        if shape not in SHAPES:
            parser.error(f"--models: {shape!r} is not one of {', '.join(SHAPES)}")
    et_ops_tool = os.path.join(args.build, "tools", "et-ops")
    lowbit_bench = os.path.join(args.build, "bench", "lowbit_bench")
    for tool in (et_ops_tool, lowbit_bench):
        if not os.access(tool, os.X_OK):
            parser.error(f"{tool} does not exist: build with -Dbenchmarks=true and give --build")
    blas = [line.split()[-1] for line in open("/proc/self/maps") if "blas" in line or "lapack" in line]
    print(f"PyTorch {torch.__version__}, BLAS in use: {', '.join(sorted(set(blas))) or 'none loaded yet'}; "
          f"SIMD: {args.isa}", flush=True)
    before = limits(lowbit_bench, args.isa)
    with tempfile.TemporaryDirectory() as temporary:
        directory = args.programs or temporary
        os.makedirs(directory, exist_ok=True)
        results = [measure_model(shape, args, directory, et_ops_tool) for shape in models]
    after = limits(lowbit_bench, args.isa)
    limit = {name: max(before[name], after[name]) for name in before}
    report(results, limit, args.isa)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(isa=args.isa, **limit, results=results), f, indent=1)
    if args.chart:
        chart(results, args.chart)


if __name__ == "__main__":
    main()
