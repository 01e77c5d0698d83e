"""The C++ SDK that comes with an installed et_ops package.

The wheel carries, inside the et_ops package, the shared libraries the
extension module loads (libet_ops.so with the one registry of the process,
and the kernel libraries), the public headers, the pkg-config files, the
CMake package and the et-ops tool; a Meson install puts the same SDK into
its prefix. A C++ program built against these directories links the very
libraries the interpreter loads, so a host that embeds Python shares one
registry with the et_ops module:

    PKG_CONFIG_PATH=$(python3 -m et_ops --pkgconfigdir) pkg-config --libs et-kernels-quantized
    cmake -Det_ops_DIR=$(python3 -m et_ops --cmakedir) ...

Each function returns an absolute path, or raises FileNotFoundError naming
the directory it expected when this package has no SDK beside it (the
build tree's package, for one).
"""

import os

from . import _sdk_layout
from .errors import SdkError

#: The project's version.
VERSION = _sdk_layout.VERSION

# A file each SDK directory must hold, to tell an SDK from a stray directory.
_MARKERS = {
    "include": os.path.join("et_ops", "registry.h"),
    "lib": "libet_ops.so." + _sdk_layout.SO_VERSION,
    "pkgconfig": "et-ops.pc",
    "cmake": "et_opsConfig.cmake",
    "bin": "et-ops",
}


def _directory(kind):
    package = os.path.dirname(os.path.abspath(__file__))
    if _sdk_layout.DIRECTORIES is None:
        raise SdkError(
            f"the et_ops package at {package} is a build tree's and has no C++ SDK: install et_ops "
            "(the wheel, or `meson install`) and use that one")
    path = os.path.normpath(os.path.join(package, _sdk_layout.DIRECTORIES[kind]))
    if not os.path.isfile(os.path.join(path, _MARKERS[kind])):
        raise SdkError(
            f"the C++ SDK of the et_ops package at {package} is incomplete: {_MARKERS[kind]} is missing from {path}")
    return path


def include_dir():
    """The directory that holds et_ops/*.h (pass it as -I)."""
    return _directory("include")


def library_dir():
    """The directory of libet_ops.so and the kernel libraries, the ones this module loads."""
    return _directory("lib")


def pkgconfig_dir():
    """The directory of et-ops.pc and et-kernels-*.pc (put it on PKG_CONFIG_PATH)."""
    return _directory("pkgconfig")


def cmake_dir():
    """The directory of the CMake package (pass it as -Det_ops_DIR)."""
    return _directory("cmake")


def tool_path():
    """The et-ops command line tool of this SDK."""
    return os.path.join(_directory("bin"), "et-ops")
