"""A Python package that carries its own copy of the quantized kernels, as a
package that vendors its dependencies does: libet_kernels_quantized.so.0
beside this file, a byte copy of the one in the et_ops wheel, installed
next to et_ops (scripts/test-wheel.sh puts it there). register_kernels()
registers that copy into the one registry of the process and reports as the
embedded host expects of a plugin (test/embedded_python/host.cpp)."""
import os

import et_ops

LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libet_kernels_quantized.so.0")


def register_kernels():
    """Registers the vendored copy; under the 'fatal' policy a second copy aborts the process."""
    try:
        counts = et_ops.load_library(LIBRARY)
    except et_ops.LibraryError as e:
        return {"ok": False, "registered": 0, "deduplicated": 0, "unchanged": 0, "message": str(e)}
    return {"ok": True, "registered": counts["registered"], "deduplicated": counts["deduplicated"],
            "unchanged": counts["unchanged"], "message": ""}
