"""Running a PyTorch comparison under every ATEN_CPU_CAPABILITY this CPU has.

PyTorch compiles its CPU kernels for baseline x86-64 ("default"), AVX2 and
AVX-512 and picks one when it starts, from ATEN_CPU_CAPABILITY or the CPU.
Its results can differ between them in the last bit, so a test that takes
PyTorch as the reference runs once per capability: users' machines run all
three. `run_under_each()` re-runs the current script once per capability
with the variable set; inside each run, `check_active()` confirms that
torch really runs the requested one.

Test scripts import this file by path: sys.path.insert(0, <test dir>).
"""

import os
import subprocess
import sys

VARIABLE = "ATEN_CPU_CAPABILITY"
# torch.__config__.show() names each capability this way.
REPORTED_NAMES = {"default": "NO AVX", "avx2": "AVX2", "avx512": "AVX512"}


def _cpu_flags():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def supported():
    """The capabilities this CPU can run, always including "default"."""
    flags = _cpu_flags()
    capabilities = ["default"]
    if {"avx2", "fma"} <= flags:
        capabilities.append("avx2")
    if {"avx512f", "avx512bw", "avx512vl", "avx512dq"} <= flags:
        capabilities.append("avx512")
    return capabilities


def requested():
    """The capability this process was started for, or None."""
    return os.environ.get(VARIABLE) or None


def run_under_each(argv=None):
    """Runs `python3 argv` once per supported capability; returns 0 if every run passed."""
    argv = list(sys.argv if argv is None else argv)
    failed = []
    for capability in supported():
        print(f"===== {VARIABLE}={capability}", flush=True)
        result = subprocess.run([sys.executable] + argv, env=dict(os.environ, **{VARIABLE: capability}))
        if result.returncode != 0:
            failed.append(capability)
    print(f"===== capabilities run: {', '.join(supported())}; failed: {', '.join(failed) or 'none'}")
    return 1 if failed else 0


def active(torch):
    """The capability torch runs, as it reports it ("NO AVX", "AVX2", "AVX512")."""
    for line in torch.__config__.show().splitlines():
        if "CPU capability usage" in line:
            return line.split(":", 1)[1].strip()
    raise RuntimeError("torch.__config__.show() does not report its CPU capability")


def check_active(torch):
    """Raises unless torch runs the capability this process was started for."""
    wanted = requested()
    if wanted is not None and active(torch) != REPORTED_NAMES[wanted]:
        raise RuntimeError(f"{VARIABLE}={wanted} was requested but torch runs {active(torch)}")
