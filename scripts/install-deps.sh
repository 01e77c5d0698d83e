#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing et_ops needs.
set -euo pipefail
packages=(
  meson ninja-build pkg-config g++ cmake make
  libfmt-dev catch2 nlohmann-json3-dev libhwy-dev libbenchmark-dev
  libxnnpack-dev libpthreadpool-dev libcpuinfo-dev libdnnl-dev python3-matplotlib python3-sklearn libsentencepiece-dev
  python3-sentencepiece sentencepiece
  python3 python3-dev pybind11-dev python3-numpy python3-torch python3-torchvision python3-torchaudio
  python3-mesonpy python3-pip python3-venv python3-build patchelf
  clang-14 libfuzzer-14-dev libclang-rt-14-dev
  # A compiler cache Meson uses when installed: the test suite's later builds
  # (the README's, the selective build's) reuse the objects of its first.
  ccache
  # Both BLAS Debian offers as libblas.so.3 (OpenBLAS becomes the system's):
  # the examples test exports under each (docs/exporting.md).
  libblas3 liblapack3 libopenblas0-pthread
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
