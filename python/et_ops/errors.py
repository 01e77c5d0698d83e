"""The exceptions of the et_ops package."""


class Error(Exception):
    """Base class of every et_ops error."""


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
