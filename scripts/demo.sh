#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs the dependencies,
# builds et_ops and shows it at work.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

build=${BUILD_DIR:-build}
[ -f "$build/build.ninja" ] || meson setup "$build" -Dtests=false -Dpython_interpreter=/usr/bin/python3
ninja -C "$build"
