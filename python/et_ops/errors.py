"""The exceptions of the et_ops package: every one derives from Error.

Those that replace a built-in exception also derive from it (UsageError is a
ValueError, SdkError a FileNotFoundError, ...), so code written against the
built-in keeps working.
"""


class Error(Exception):
    """Base class of every et_ops error."""


class UsageError(Error, ValueError):
    """An argument that et_ops does not accept: a duplicate policy, a backend,
    a thread count, a dtype, a calibration set. The message names it and the
    values it may take."""


class UsageTypeError(UsageError, TypeError):
    """An argument of a type et_ops does not accept (also a TypeError)."""


class FormatError(Error, ValueError):
    """Bytes that are not a valid .etp program (et_ops.etp.read_program)."""


class SdkError(Error, FileNotFoundError):
    """The package has no C++ SDK, or an incomplete one (et_ops.sdk)."""


class PinningError(Error, RuntimeError):
    """The process cannot be given CPU-independent numerics
    (et_ops.cpu_independence)."""


class LoadError(Error):
    """A program could not be loaded.

    kind is 'file' (cannot open or read it), 'format' (not a valid .etp
    program) or 'missing_operators' (a valid program whose operators are not
    all registered: a packaging problem, not a model problem). missing lists
    the missing operators as dicts with 'op', 'component' (the et_ops
    component that provides it, or None) and 'pkg_config'.
    """

    def __init__(self, message, kind, path, missing=()):
        super().__init__(message)
        self.kind = kind
        self.path = path
        self.missing = list(missing)


class InputError(Error, ValueError):
    """The inputs given to Program.run do not match the program's input specs."""


class RunError(Error):
    """A kernel reported an error while the program ran."""


class LibraryError(Error):
    """load_library failed.

    reason is 'open' (dlopen failed), 'entry_point' (not an et_ops kernel
    library), or the registry's status: 'conflict', 'invalid', 'policy',
    'no_memory'. The message is the loader's or the registry's own.
    """

    def __init__(self, message, reason, path):
        super().__init__(message)
        self.reason = reason
        self.path = path
