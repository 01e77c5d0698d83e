#!/usr/bin/env python3
"""Writes a modified copy of a kernel source: the same code plus a marker
that makes it a different source, hence a different fingerprint."""
import sys

source, output = sys.argv[1], sys.argv[2]
with open(source) as f:
    text = f.read()
with open(output, "w") as f:
    f.write(text)
    f.write("\n// Modified copy for the embedded-Python test: a different implementation.\n")
    f.write("[[maybe_unused]] static const int kModifiedKernelMarker = 1;\n")
