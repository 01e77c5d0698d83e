#!/usr/bin/env bash
# The Python wheel with the C++ SDK inside (docs/wheel.md), from a clean
# checkout: runs every command block of docs/wheel.md in order (they build
# the wheel offline with meson-python, install it into a fresh virtual
# environment with pip --no-index, use the module, the exporter and et-ops,
# and build a pkg-config consumer, a CMake consumer and the embedded-Python
# host against the SDK), then checks the SDK inside the package: its files,
# run paths relative to themselves, pkg-config files and CMake package that
# relocate with a copied package, one registry in an embedded host, and a
# vendored second copy of the quantized kernels under both policies.
# Everything it makes lives in a scratch directory, removed at the end.
#
# Usage: scripts/test-wheel.sh
# Every check that fails makes the script fail; nothing is skipped.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d /tmp/et_ops_wheel.XXXXXX)
native_file=$root/.mesonpy-native-file.ini  # meson-python writes it into the checkout
[ -e "$native_file" ] && keep_native_file=yes || keep_native_file=no
cleanup() {
  rm -rf "$work"
  if [ "$keep_native_file" = no ]; then rm -f "$native_file"; fi
}
trap cleanup EXIT
. "$root/scripts/checks.sh"

step "the commands of docs/wheel.md: in order, in one shell, in a directory of its own"
# As a reader runs them, with the documentation's runner (scripts/test-docs.sh
# leaves this page to this script): a clean environment, a scratch HOME, the
# page's own directory $HOME/wheel, and ET_OPS_SOURCE naming this checkout.
if /usr/bin/python3 "$root/scripts/check_docs.py" run --source "$root" --work "$work/docs" --keep docs/wheel.md; then
  pass "docs/wheel.md runs as written"
else
  fail "docs/wheel.md runs as written"
fi
page=$work/docs/home/wheel

venv=$page/venv
example=$page/exported  # the program the page exported, its input, and output.npy from it
python=$venv/bin/python3
[ -x "$python" ] || { echo "no virtual environment at $venv: docs/wheel.md failed"; summary wheel; }
export PATH=$venv/bin:$PATH VIRTUAL_ENV=$venv
unset PYTHONPATH LD_LIBRARY_PATH PKG_CONFIG_PATH
package=$("$python" -c 'import et_ops, os; print(os.path.dirname(et_ops.__file__))')
libdir=$("$python" -m et_ops --libdir)
echo "package: $package"

step "python3 -m et_ops"
check "--includes, --libdir, --pkgconfigdir, --cmakedir lie inside the package" bash -c "
  [ \"\$('$python' -m et_ops --includes --libdir --pkgconfigdir --cmakedir)\" = \"\$(printf '%s\n' \
    '$package/include' '$package/lib' '$package/lib/pkgconfig' '$package/lib/cmake/et_ops')\" ]"
check "--version is the project's version" bash -c "
  [ \"\$('$python' -m et_ops --version)\" = \"\$(meson introspect --projectinfo '$root/meson.build' |
    /usr/bin/python3 -c 'import json, sys; print(json.load(sys.stdin)[\"version\"])')\" ]"
check "--help exits 0" "$python" -m et_ops --help
usage_error() { local status=0; "$python" -m et_ops "$@" >/dev/null 2>&1 || status=$?; [ "$status" -eq 2 ]; }
check "an unknown option is a usage error (exit 2)" usage_error --libdirs
check "no option is a usage error (exit 2)" usage_error
check "et-ops on PATH is the package's tool" bash -c "command -v et-ops | grep -qx '$venv/bin/et-ops' &&
  et-ops ops --json | /usr/bin/python3 -c 'import json, sys; ops = json.load(sys.stdin)[\"operators\"];
sys.exit(0 if ops and all(r[\"library\"].startswith(\"$libdir/\") for r in ops) else 1)'"
check "et-ops check: every shipped library found, no collision" et-ops check
check "et-ops reports a bad ET_OPS_DUPLICATE_POLICY itself (the launcher does not import et_ops)" bash -c "
  out=\$(ET_OPS_DUPLICATE_POLICY=bogus et-ops run '$example/qmlp.etp' --input '$example/qmlp_input_0.npy' 2>&1);
  [ \$? -eq 1 ] && grep -q ET_OPS_DUPLICATE_POLICY <<<\"\$out\" && ! grep -q Traceback <<<\"\$out\""

step "the SDK inside the package"
# The kernel sets: the names in the one table, src/kernels/kernel_sets.txt.
kernel_sets=$(sed 's/#.*//' "$root/src/kernels/kernel_sets.txt" | awk -F'|' 'NF > 1 { gsub(/[ \t]/, "", $1); print $1 }')
sdk_files="lib/libet_ops.so.0 lib/libet_ops.so lib/pkgconfig/et-ops.pc lib/cmake/et_ops/et_opsConfig.cmake
  lib/cmake/et_ops/et_opsConfigVersion.cmake include/et_ops/version.h bin/et-ops bin/et-ops-fingerprint"
for set in $kernel_sets; do
  sdk_files+=" lib/libet_kernels_$set.so.0 lib/libet_kernels_$set.so lib/pkgconfig/et-kernels-$set.pc"
done
for f in $sdk_files; do
  check "the package holds $f" test -f "$package/$f"
done
# The build generates version.h and each kernel set's kernels/NAME_operators.h.
generated_headers="et_ops/version.h"
for set in $kernel_sets; do generated_headers+=" et_ops/kernels/${set}_operators.h"; done
check "the headers are exactly include/ of the checkout plus the generated ones" bash -c "
  diff <( (cd '$root/include' && find et_ops -name '*.h' -o -name '*.def'; printf '%s\n' $generated_headers) | sort) \
       <(cd '$package/include' && find et_ops -type f | sort)"
while IFS= read -r header; do
  relative=${header#"$package/include/"}
  check "header $relative compiles on its own" bash -c "echo '#include <$relative>' |
    g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I'$package/include' -x c++ -"
done < <(find "$package/include/et_ops" -name '*.h' | sort)
check "the package's Python modules are exactly python/et_ops/ (plus the generated _sdk_layout.py, _dtypes.py, _operators.py)" bash -c "
  diff <(cd '$root/python' && find et_ops -name '*.py' | sort) \
       <(cd '$package/..' && find et_ops -name '*.py' ! -name _sdk_layout.py ! -name _dtypes.py ! -name _operators.py \
           ! -path '*/__pycache__/*' | sort)"
runpath() { readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'; }
check "the libraries find each other through \$ORIGIN" bash -c "
  for lib in '$libdir'/lib*.so.0; do [ \"\$(readelf -d \"\$lib\" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')\" = '\$ORIGIN' ] || exit 1; done"
check "the extension's run path is \$ORIGIN/lib" test "$(runpath "$package"/_et_ops.*.so)" = '$ORIGIN/lib'
check "et-ops's run path is \$ORIGIN/../lib" test "$(runpath "$package/bin/et-ops")" = '$ORIGIN/../lib'
check "the extension loads the package's libraries" bash -c "
  ldd '$package'/_et_ops.*.so | grep -q \"libet_ops.so.0 => $libdir/libet_ops.so.0\" &&
  ldd '$package'/_et_ops.*.so | grep -q \"libet_kernels_quantized.so.0 => $libdir/libet_kernels_quantized.so.0\""
check "every Python module imports" "$python" -c "
import importlib, pkgutil, et_ops
for module in pkgutil.walk_packages(et_ops.__path__, 'et_ops.'):
    if module.name != 'et_ops.__main__':
        importlib.import_module(module.name)"

step "CMake variables consumer against the wheel"
cmake_build() {  # cmake_build SOURCE BINARY CMAKE_DIR
  cmake -S "$1" -B "$2" -Det_ops_DIR="$3" >/dev/null && cmake --build "$2" >/dev/null
}
cp -r "$root/examples/consumer" "$work/consumer_variables"
check "CMake variables consumer builds" cmake_build "$work/consumer_variables/cmake-variables" \
  "$work/consumer_variables/build" "$("$python" -m et_ops --cmakedir)"
check "CMake variables consumer runs the example" "$work/consumer_variables/build/consumer" "$example/qmlp.etp" \
  "$example/qmlp_input_0.npy" "$work/variables_output.npy"
check "ET_OPS_QUANTIZED_KERNELS_LIBRARY is the wheel's library" bash -c "
  ldd '$work/consumer_variables/build/consumer' | grep -q 'libet_kernels_quantized.so.0 => $libdir/libet_kernels_quantized.so.0'"

step "a kernel library of one's own, built against the wheel (the kit, the fingerprint helper)"
custom=$work/custom_kernels
cp -r "$root/examples/custom_kernels" "$custom"
check "examples/custom_kernels builds with CMake against the wheel" cmake_build "$custom" "$custom/build" \
  "$("$python" -m et_ops --cmakedir)"
check "et-ops runs its program with it" et-ops run "$custom/custom.etp" --load-library "$custom/build/libacme_kernels.so" \
  --input "$custom/custom_input_0.npy" --output-dir "$work/custom_output"
check "Python runs it with the same bytes" "$python" -c "
import numpy as np, et_ops
et_ops.load_library('$custom/build/libacme_kernels.so')
out = et_ops.load('$custom/custom.etp').run([np.load('$custom/custom_input_0.npy')])[0]
assert out.tobytes() == np.load('$work/custom_output/output_0.npy').tobytes()"

step "a copied package keeps working (pkg-config, CMake, Python)"
moved=$work/moved
mkdir -p "$moved"
cp -a "$package" "$moved/et_ops"
pc_include=$(PKG_CONFIG_PATH=$moved/et_ops/lib/pkgconfig pkg-config --cflags-only-I et-kernels-quantized |
  tr ' ' '\n' | grep -- '^-I' | head -n1)
check "pkg-config points into the copy" test "$(realpath "${pc_include#-I}")" = "$moved/et_ops/include"
check "the pkg-config consumer builds against the copy and runs" bash -c "
  g++ -std=c++17 '$root/examples/consumer/main.cpp' -o '$work/moved_consumer' \
    \$(PKG_CONFIG_PATH='$moved/et_ops/lib/pkgconfig' pkg-config --cflags --libs et-kernels-quantized et-kernels-portable) \
    -Wl,-rpath,'$moved/et_ops/lib' &&
  ldd '$work/moved_consumer' | grep -q 'libet_ops.so.0 => $moved/et_ops/lib/libet_ops.so.0' &&
  '$work/moved_consumer' '$example/qmlp.etp' '$example/qmlp_input_0.npy' '$work/moved_output.npy' >/dev/null &&
  cmp '$work/moved_output.npy' '$page/output.npy'"
mkdir -p "$work/cmake_moved"
cp "$root/examples/consumer/CMakeLists.txt" "$root/examples/consumer/main.cpp" "$work/cmake_moved/"
check "the CMake consumer builds against the copy and links its libraries" bash -c "
  cmake -S '$work/cmake_moved' -B '$work/cmake_moved/build' -Det_ops_DIR='$moved/et_ops/lib/cmake/et_ops' >/dev/null &&
  cmake --build '$work/cmake_moved/build' >/dev/null &&
  ldd '$work/cmake_moved/build/consumer' | grep -q 'libet_ops.so.0 => $moved/et_ops/lib/libet_ops.so.0'"
check "python3 -m et_ops of the copy prints the copy's directories" bash -c "
  [ \"\$(PYTHONPATH='$moved' '$python' -m et_ops --libdir)\" = '$moved/et_ops/lib' ]"
check "the copy's extension runs the example with the copy's libraries" env PYTHONPATH="$moved" "$python" -c "
import numpy as np, et_ops
assert et_ops.__file__.startswith('$moved/'), et_ops.__file__
assert all(r['library'].startswith('$moved/et_ops/lib/') for r in et_ops.registered_operators())
out = et_ops.load('$example/qmlp.etp').run([np.load('$example/qmlp_input_0.npy')])[0]
assert out.tobytes() == np.load('$page/output.npy').tobytes()"

check "a copy with a file missing from its SDK says which (exit 1)" bash -c "
  rm '$moved/et_ops/lib/cmake/et_ops/et_opsConfig.cmake'
  out=\$(PYTHONPATH='$moved' '$python' -m et_ops --cmakedir 2>&1); status=\$?
  [ \$status -eq 1 ] && grep -q 'et_opsConfig.cmake is missing' <<<\"\$out\""

step "the embedded host: one registry, and a vendored copy under both policies"
site=$("$python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
cp -r "$root/test/wheel/et_ops_plugin_vendored" "$site/"
cp "$libdir/libet_kernels_quantized.so.0" "$site/et_ops_plugin_vendored/"
check "the host (built by the docs' block) passes the one-registry and vendored-copy cases" \
  /usr/bin/python3 "$root/test/wheel/embedded_host_test.py" "$page/host" "$example" "$venv"

summary wheel
