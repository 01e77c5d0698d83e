"""Python code running inside the host that brings its own copy of the kernels.

A copy of the quantized kernel library stands in for an extension module
built with the kernels compiled into it: registering it meets the copy
that the host registered.
    plugin.py LIBRARY [POLICY]
"""
import sys

import et_ops  # registers the shipped kernel sets: the host's very libraries, so nothing changes

library = sys.argv[1]
if len(sys.argv) > 2:
    et_ops.set_duplicate_policy(sys.argv[2])
result = et_ops.load_library(library)
print(f"plugin: {result['registered']} kernels registered, {result['deduplicated']} deduplicated")
