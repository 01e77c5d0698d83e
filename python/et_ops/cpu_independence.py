"""PyTorch numerics that are the same on every x86-64 CPU.

PyTorch chooses its CPU kernels by instruction set: aten compiles each
kernel for baseline x86-64, AVX2 and AVX-512 and picks one at run time
(``ATEN_CPU_CAPABILITY``), and the AVX2 builds contract ``a * b + c`` into
fused multiply-adds. oneDNN picks its convolution kernels and their
blocking by instruction set and cache sizes, a BLAS like OpenBLAS picks its
kernels by CPU model, and parallel reductions split by thread count. Each
choice moves float32 results by an ulp here and there: random weight
initialisation (``uniform_``, ``randn``), convolutions, observers'
histograms. An exporter whose calibration ranges, bias corrections or
reference outputs moved by one ulp would write different bytes.

The exporter's command line therefore pins every one of these choices to
what any x86-64 machine runs identically, before PyTorch is imported:
aten's baseline kernels, one thread, no oneDNN, OpenBLAS's baseline kernels
in case OpenBLAS is the system BLAS (Debian's default BLAS, libblas3, is
compiled for baseline x86-64 anyway), and glibc's baseline libm: glibc
binds ``expf``, ``exp``, ``logf`` and others to FMA variants on CPUs with
FMA and AVX2, whose results differ in the last bit, and it binds them when
the process starts, so the command line re-executes itself once with the
tunable that turns those variants off. The exported bytes are then a pure
function of the command line. Library users who call the exporter's
functions from their own process get the same numerics by starting Python
with `PINNED_ENVIRONMENT` and `LIBM_TUNABLE` in its environment and calling
`pin_torch()` after ``import torch``.
"""

import os
import re
import sys

from .errors import PinningError  # noqa: F401 (re-exported: et_ops.cpu_independence.PinningError)

#: Environment read by PyTorch and its libraries when they load.
PINNED_ENVIRONMENT = {
    "ATEN_CPU_CAPABILITY": "default",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "OPENBLAS_CORETYPE": "Prescott",
}


#: The glibc tunable that keeps libm on its baseline (non-FMA) functions.
LIBM_TUNABLE = "glibc.cpu.hwcaps=-AVX2,-FMA,-FMA4"


def _tunables_with_libm_pinned():
    tunables = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t]
    return tunables if LIBM_TUNABLE in tunables else tunables + [LIBM_TUNABLE]


def pin_process():
    """For a command line, before it imports torch: sets PINNED_ENVIRONMENT, and
    re-executes the process once when glibc's libm was bound without LIBM_TUNABLE."""
    if "torch" in sys.modules:
        raise PinningError("torch is already imported, so its CPU kernels are already chosen; call "
                           "et_ops.cpu_independence.pin_process() before the first `import torch`")
    os.environ.update(PINNED_ENVIRONMENT)
    tunables = _tunables_with_libm_pinned()
    if os.environ.get("GLIBC_TUNABLES", "").split(":") != tunables:
        os.environ["GLIBC_TUNABLES"] = ":".join(tunables)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable] + sys.orig_argv[1:])


def aten_cpu_capability(torch):
    """The kernel set aten runs ("NO AVX", "AVX2", "AVX512"), as torch reports it."""
    match = re.search(r"CPU capability usage: ([^\n]+)", torch.__config__.show())
    if match is None:
        raise PinningError("torch.__config__.show() does not report the CPU capability in use")
    return match.group(1).strip()


def pin_torch(torch):
    """Turns off oneDNN and extra threads, and checks that the process was pinned."""
    torch.backends.mkldnn.enabled = False
    torch.set_num_threads(1)
    capability = aten_cpu_capability(torch)
    if capability != "NO AVX":
        raise PinningError(f"aten runs its {capability} kernels, not the baseline ones: torch was imported "
                           f"without ATEN_CPU_CAPABILITY=default (see et_ops.cpu_independence)")
    if LIBM_TUNABLE not in os.environ.get("GLIBC_TUNABLES", "").split(":"):
        raise PinningError(f"the process started without GLIBC_TUNABLES={LIBM_TUNABLE}, so libm may run "
                           f"its FMA variants (see et_ops.cpu_independence)")


def describe():
    """What the pinned numerics are, for the exporter's report."""
    return {
        "environment": dict(PINNED_ENVIRONMENT, GLIBC_TUNABLES=LIBM_TUNABLE),
        "onednn": False,
        "threads": 1,
    }
