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

Which BLAS library is installed matters too: float linear layers and
convolutions call ``sgemm`` of whatever ``libblas.so.3`` the system names,
and OpenBLAS (Debian's libopenblas0-pthread, which numpy users install)
sums in blocks, in another order than Debian's reference BLAS (libblas3,
netlib's loops: each output summed in order of the inner dimension), even
on its baseline kernels and one thread.

The exporter's command line therefore pins every one of these choices to
what any x86-64 machine runs identically, before PyTorch is imported:
aten's baseline kernels, one thread, no oneDNN, OpenBLAS's baseline kernels
in case OpenBLAS is loaded anyway, Debian's reference BLAS and LAPACK
(their directories first on ``LD_LIBRARY_PATH``: the reference LAPACK, or
OpenBLAS's would bring OpenBLAS's ``sgemm`` along), and glibc's baseline
libm: glibc binds ``expf``, ``exp``, ``logf`` and others to FMA variants on
CPUs with FMA and AVX2, whose results differ in the last bit. The dynamic
linker reads the library path and glibc binds libm when the process
starts, so the command line re-executes itself once with both set. The
exported bytes are then a pure function of the command line. Library users
who call the exporter's functions from their own process get the same
numerics by starting Python with `PINNED_ENVIRONMENT`, `LIBM_TUNABLE` and
`reference_blas_library_path()` in its environment and calling
`pin_torch()` after ``import torch``, which checks all of it.
"""

import os
import re
import sys
import sysconfig

from .errors import PinningError

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


#: Debian's reference BLAS and LAPACK (packages libblas3 and liblapack3):
#: library file -> the directory under /usr/lib/<multiarch> that holds it.
REFERENCE_BLAS = {"libblas.so.3": "blas", "liblapack.so.3": "lapack"}


def reference_blas_directories():
    """The directories of Debian's reference BLAS and LAPACK; PinningError when one is not installed."""
    root = os.path.join("/usr/lib", sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu")
    directories = []
    for library, directory in REFERENCE_BLAS.items():
        path = os.path.join(root, directory)
        if not os.path.exists(os.path.join(path, library)):
            raise PinningError(f"{os.path.join(path, library)} is missing: the exporter computes PyTorch's float "
                               f"matrix products with Debian's reference BLAS and LAPACK, whatever the system BLAS "
                               f"is; install them with `apt-get install libblas3 liblapack3`")
        directories.append(path)
    return directories


def reference_blas_library_path():
    """LD_LIBRARY_PATH with the reference BLAS and LAPACK directories first."""
    directories = reference_blas_directories()
    rest = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d and d not in directories]
    return ":".join(directories + rest)


def _tunables_with_libm_pinned():
    tunables = [t for t in os.environ.get("GLIBC_TUNABLES", "").split(":") if t]
    return tunables if LIBM_TUNABLE in tunables else tunables + [LIBM_TUNABLE]


def pin_process():
    """For a command line, before it imports torch: sets PINNED_ENVIRONMENT, and
    re-executes the process once when it started without LIBM_TUNABLE or
    without the reference BLAS first on its library path."""
    if "torch" in sys.modules:
        raise PinningError("torch is already imported, so its CPU kernels are already chosen; call "
                           "et_ops.cpu_independence.pin_process() before the first `import torch`")
    os.environ.update(PINNED_ENVIRONMENT)
    pinned = {"GLIBC_TUNABLES": ":".join(_tunables_with_libm_pinned()),
              "LD_LIBRARY_PATH": reference_blas_library_path()}
    if any(os.environ.get(name) != value for name, value in pinned.items()):
        os.environ.update(pinned)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execv(sys.executable, [sys.executable] + sys.orig_argv[1:])


def loaded_blas_libraries():
    """The files of every BLAS and LAPACK library mapped into this process."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split(maxsplit=5)[5].strip() for line in maps if len(line.split(maxsplit=5)) == 6}
    return sorted(p for p in paths if re.search(r"/lib(c?blas|lapack|openblas)[^/]*\.so", p))


def check_reference_blas():
    """PinningError unless every BLAS and LAPACK library in the process is the reference one."""
    directories = reference_blas_directories()
    foreign = [p for p in loaded_blas_libraries() if os.path.dirname(os.path.realpath(p)) not in directories]
    if foreign:
        raise PinningError(f"this process runs {', '.join(foreign)}, not only Debian's reference BLAS and LAPACK, "
                           f"whose summation order the exported bytes depend on: start it with "
                           f"LD_LIBRARY_PATH={reference_blas_library_path()} and without a BLAS in LD_PRELOAD "
                           f"(see et_ops.cpu_independence)")


def aten_cpu_capability(torch):
    """The kernel set aten runs ("NO AVX", "AVX2", "AVX512"), as torch reports it."""
    match = re.search(r"CPU capability usage: ([^\n]+)", torch.__config__.show())
    if match is None:
        raise PinningError("torch.__config__.show() does not report the CPU capability in use")
    return match.group(1).strip()


def pin_torch(torch):
    """Turns off oneDNN and extra threads, and checks that the process was pinned
    (capability, libm, BLAS)."""
    torch.backends.mkldnn.enabled = False
    torch.set_num_threads(1)
    capability = aten_cpu_capability(torch)
    if capability != "NO AVX":
        raise PinningError(f"aten runs its {capability} kernels, not the baseline ones: torch was imported "
                           f"without ATEN_CPU_CAPABILITY=default (see et_ops.cpu_independence)")
    if LIBM_TUNABLE not in os.environ.get("GLIBC_TUNABLES", "").split(":"):
        raise PinningError(f"the process started without GLIBC_TUNABLES={LIBM_TUNABLE}, so libm may run "
                           f"its FMA variants (see et_ops.cpu_independence)")
    check_reference_blas()


def describe():
    """What the pinned numerics are, for the exporter's report."""
    return {
        "environment": dict(PINNED_ENVIRONMENT, GLIBC_TUNABLES=LIBM_TUNABLE),
        "blas": "Debian's reference BLAS and LAPACK (libblas3, liblapack3), first on LD_LIBRARY_PATH",
        "onednn": False,
        "threads": 1,
    }
