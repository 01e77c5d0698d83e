#!/usr/bin/env bash
# Follows the documentation as a new user would: every page with run blocks
# (README.md, docs/quickstart.md, then the others), each page's shell and
# Python steps in order, from a fresh directory outside the repository with
# a scratch HOME, against a snapshot of this checkout (its README builds it,
# its quick start installs it into $HOME/et_ops, the other pages use that
# install). A step that fails fails the script, with the log from that step.
#
# Usage: scripts/test-docs.sh [PAGE...] [-- OPTIONS of check_docs.py run]
#   e.g. scripts/test-docs.sh docs/quickstart.md -- --keep --work /tmp/docs
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pages=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pages+=("$1"); shift; done
[ $# -gt 0 ] && shift
exec /usr/bin/python3 "$root/scripts/check_docs.py" run --source "$root" --snapshot "$@" "${pages[@]}"
