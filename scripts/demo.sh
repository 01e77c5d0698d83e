#!/usr/bin/env bash
# The main job from a fresh Debian 12 machine: installs the dependencies,
# builds et_ops, exports a small quantized MLP from PyTorch, runs it with
# the et-ops tool, and prints its output beside PyTorch's reference
# quantized model.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

build=${BUILD_DIR:-build}
python=/usr/bin/python3  # Debian's interpreter: it has numpy and torch from apt
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dtests=false -Dpython_interpreter=$python
fi
ninja -C "$build"

demo=$build/demo
rm -rf "$demo"
echo
echo "== Export a quantized MLP from PyTorch (its quantization flow, int8 weights, uint8 activations)"
PYTHONPATH=$build/src/python $python -m et_ops.export --model mlp --output-dir "$demo"

echo
echo "== Run it with et-ops (quantized_decomposed + aten kernels)"
"$build/tools/et-ops" run "$demo/qmlp.etp" --input "$demo/qmlp_input_0.npy" --output-dir "$demo" --repeat 100

echo
echo "== et_ops output beside PyTorch's reference quantized model"
$python - "$demo" <<'PY'
import json, sys
import numpy as np
demo = sys.argv[1]
out = np.load(f"{demo}/output_0.npy")
ref = np.load(f"{demo}/qmlp_reference.npy")
step = json.load(open(f"{demo}/qmlp_quantization.json"))["tolerance"]["output_step"]
print(f"{'et_ops':>12} {'PyTorch':>12} {'difference':>12}")
for q, f in zip(out.ravel(), ref.ravel()):
    print(f"{q:12.5f} {f:12.5f} {q - f:12.5f}")
worst = float(np.abs(out - ref).max())
print(f"worst difference {worst:.5f} = {worst / step:.2f} output quantization steps ({step:.5f} each)")
sys.exit(0 if worst <= 3 * step else 1)
PY
