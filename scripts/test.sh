#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs the
# dependencies, builds with warnings as errors, runs every test.
# Exits non-zero when anything fails.
set -euo pipefail
cd "$(dirname "$0")/.."

# Runs a step and prints how long it took (CI keeps an eye on its budget).
step() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  printf '=== step %s: %d s\n' "$name" "$((SECONDS - start))"
}

step dependencies scripts/install-deps.sh

build=${BUILD_DIR:-build-test}
# The compiler cache (ccache, which Meson uses) of this suite's builds: the
# selective build (test/scripts) finds the SIMD kernels here, and the
# documentation pages build the README's configuration again, without
# -Werror; leaving -Werror out of the cache key lets them find these objects
# (they only read the cache: scripts/check_docs.py).
export CCACHE_DIR=${CCACHE_DIR:-$PWD/$build/ccache}
export CCACHE_IGNOREOPTIONS=-Werror
# numpy and torch come from apt, so the tests use Debian's interpreter.
options=(-Dwerror=true -Dtests=true -Dbenchmarks=true -Dpython_interpreter=/usr/bin/python3)
if [ -f "$build/build.ninja" ]; then
  step configure meson setup "$build" --reconfigure "${options[@]}"
else
  step configure meson setup "$build" "${options[@]}"
fi
step build ninja -C "$build"
step tests meson test -C "$build" --print-errorlogs --num-processes 2
# Install the build and consume it three ways (pkg-config, Meson, CMake).
step packaging scripts/test-packaging.sh "$build"
# Build the Python wheel, install it into a fresh virtual environment and
# build C++ consumers and an embedded-Python host against its SDK.
step wheel scripts/test-wheel.sh
# Every page of the documentation followed as written, from a scratch
# directory and HOME outside the repository (README, quick start, ...).
step docs scripts/test-docs.sh
# The sanitizer builds and the fuzz smoke test (docs/hardening.md).
step sanitizers scripts/test-sanitizers.sh
step fuzz scripts/fuzz-smoke.sh
