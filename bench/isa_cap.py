"""--isa for the benchmark scripts: what an AVX2 machine (no AVX-512) gets.

A script reads --isa from its command line, in either spelling (--isa=avx2
or --isa avx2), before argparse runs and before PyTorch and the kernels
load, because the caps are environment variables read when each library
starts: oneDNN (PyTorch's and the int8 set's), aten's kernels, XNNPACK and
the kernel sets' own SIMD paths. argparse still checks the value (its
choices) afterwards.
"""

import os

CHOICES = ("native", "avx2")

# What --isa=avx2 sets.
AVX2_CAPS = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "ATEN_CPU_CAPABILITY": "avx2",
    "ET_OPS_XNNPACK_MAX_ISA": "avx2",
    "ET_OPS_SIMD_MAX_ISA": "avx2",
}


def isa_of(argv):
    """--isa's value in argv, either spelling; "native" when absent."""
    for i, argument in enumerate(argv):
        if argument.startswith("--isa="):
            return argument.split("=", 1)[1]
        if argument == "--isa" and i + 1 < len(argv):
            return argv[i + 1]
    return "native"


def apply(argv, environ=os.environ):
    """Sets the AVX2 caps in environ when argv asks for --isa avx2; returns the value."""
    isa = isa_of(argv)
    if isa == "avx2":
        environ.update(AVX2_CAPS)
    return isa
