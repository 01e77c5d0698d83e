"""et_ops from Python: run et_ops programs (.etp) and inspect the kernel registry.

Importing the package registers the project's kernel sets (portable and
quantized) in the process-wide registry of libet_ops.so; a registration
error makes the import fail with ImportError and the registry's message.

    import et_ops
    program = et_ops.load("qmlp.etp")
    outputs = program.run([numpy_array])
    session = program.session()               # keeps a program's state between runs
    new_tokens = et_ops.generate(lm_program, [1, 2, 3], max_new_tokens=16)

The exporter is `python3 -m et_ops.export` (see et_ops.export). An
installed package also carries the C++ SDK: see et_ops.sdk and
`python3 -m et_ops --help`.
"""

from . import _et_ops
from .errors import (Error, FormatError, InputError, LibraryError, LoadError, PinningError, RunError, SdkError,
                     UsageError, UsageTypeError)
from .generation import Generation, generate
from .program import Program, Session, TensorSpec, load
from .registry import (clear_duplicate_policy, counters, duplicate_policy, load_library, registered_operators,
                       set_duplicate_policy, unregister_library)
from .sdk import VERSION as __version__

#: The project's kernel components this module registered on import.
components = _et_ops.components

__all__ = [
    "Error", "FormatError", "InputError", "LibraryError", "LoadError", "PinningError", "RunError", "SdkError",
    "UsageError", "UsageTypeError",
    "Program", "Session", "TensorSpec", "load", "generate", "Generation",
    "clear_duplicate_policy", "counters", "duplicate_policy", "load_library", "registered_operators",
    "set_duplicate_policy", "unregister_library", "components",
]
