#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs the dependencies,
# builds et_ops and installs it under the build directory, builds a C++
# application against that install, then trains a small CNN on the
# handwritten digits that python3-sklearn ships, quantizes it with
# PyTorch's flow, exports it for the reference and xnnpack backends, and
# classifies the held-out digits with PyTorch, `et-ops run --batch` and the
# C++ application: one table of accuracy and speed, and a chart
# (examples/digits/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

build=${BUILD_DIR:-build}
python=/usr/bin/python3  # Debian's interpreter: it has numpy, torch and sklearn from apt
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dtests=false -Dpython_interpreter=$python
fi
ninja -C "$build"

demo=$build/demo
rm -rf "$demo"
mkdir -p "$demo/classify"
demo=$(cd "$demo" && pwd)
echo
echo "== Install et_ops into $demo/install and build examples/digits/classify.cpp against it (make, pkg-config)"
meson install -C "$build" --quiet --destdir "$demo/install"
pkgconfig=$(dirname "$(find "$demo/install" -name et-ops.pc -print -quit)")
cp examples/digits/classify.cpp examples/digits/Makefile "$demo/classify/"
PKG_CONFIG_PATH=$pkgconfig make -C "$demo/classify" --no-print-directory

echo
echo "== Train, quantize and export the digits model; classify the held-out digits every way"
PYTHONPATH=examples:$build/src/python $python -m digits demo --output-dir "$demo" --et-ops "$build/tools/et-ops" \
  --classify "$demo/classify/classify"
