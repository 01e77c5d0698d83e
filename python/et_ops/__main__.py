"""python3 -m et_ops: where the C++ SDK of this et_ops package lies.

    python3 -m et_ops --includes      the include directory (-I)
    python3 -m et_ops --libdir        the directory of the shared libraries
    python3 -m et_ops --pkgconfigdir  the directory for PKG_CONFIG_PATH
    python3 -m et_ops --cmakedir      the directory for -Det_ops_DIR
    python3 -m et_ops --version       the project's version

Several options print one line each, in the order given. Exit status: 0,
1 when this package has no SDK (a build tree's package), 2 on a usage error.
"""

import argparse
import sys

from . import sdk

_QUERIES = {
    "--includes": (sdk.include_dir, "print the include directory, which holds et_ops/*.h"),
    "--libdir": (sdk.library_dir, "print the directory of libet_ops.so and the kernel libraries"),
    "--pkgconfigdir": (sdk.pkgconfig_dir, "print the directory of the pkg-config files (for PKG_CONFIG_PATH)"),
    "--cmakedir": (sdk.cmake_dir, "print the directory of the CMake package (for -Det_ops_DIR)"),
    "--version": (lambda: sdk.VERSION, "print the version of et_ops"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m et_ops",
        allow_abbrev=False,
        description="Prints where the C++ SDK of this et_ops package lies, so that C++ programs build against "
                    "the very libraries this interpreter loads.")
    for flag, (query, text) in _QUERIES.items():
        parser.add_argument(flag, dest="queries", action="append_const", const=query, help=text)
    arguments = parser.parse_args(argv)
    if not arguments.queries:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog}: error: give at least one of {', '.join(_QUERIES)}", file=sys.stderr)
        return 2
    try:
        lines = [query() for query in arguments.queries]
    except FileNotFoundError as e:
        print(f"{parser.prog}: {e}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
