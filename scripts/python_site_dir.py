"""Prints the site directory under PREFIX that this interpreter searches.

Usage: python_site_dir.py PREFIX FALLBACK

The directory is the first entry of sys.path that is a site-packages or
dist-packages directory inside PREFIX's library directories (lib/...), so
that the prefix /usr does not pick /usr/local/lib/...; when no entry
qualifies, FALLBACK is printed.
"""

import os
import sys


def site_dir(prefix, fallback):
    prefix = os.path.normpath(prefix)
    for entry in sys.path:
        if not entry or not os.path.isabs(entry):
            continue
        entry = os.path.normpath(entry)
        if os.path.basename(entry) not in ("site-packages", "dist-packages"):
            continue
        relative = os.path.relpath(entry, prefix)
        if relative.split(os.sep)[0].startswith("lib"):
            return entry
    return fallback


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(site_dir(sys.argv[1], sys.argv[2]))
