#!/usr/bin/env bash
# Installs a built et_ops into a fresh prefix and consumes it the three
# ways users do: pkg-config (then again after moving the prefix), Meson
# (installed, and as a subproject from a `meson dist` tarball through a wrap
# file), and CMake (targets, and variables only). Builds the third-party
# kernel library of examples/custom_kernels against it the same three ways,
# runs its program from et-ops and Python, and loads a byte copy and a
# rebuild of it under both duplicate policies. Also checks the installed
# tree: layout, headers that compile alone, a definition for every exported
# function, and the ownership table of the shipped kernel libraries.
#
# Usage: scripts/test-packaging.sh BUILD_DIR
# Every check that fails makes the script fail; nothing is skipped.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d /tmp/et_ops_packaging.XXXXXX)
trap 'rm -rf "$work"' EXIT
. "$root/scripts/checks.sh"

option() {  # the value of a Meson build option of $build
  meson introspect --buildoptions "$build" |
    /usr/bin/python3 -c "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name']=='$1'))"
}

program=$root/examples/qmlp/qmlp.etp
program_input=$root/examples/qmlp/qmlp_input_0.npy

step "install into a fresh prefix"
meson install -C "$build" --destdir "$work/stage" --quiet
prefix_setting=$(option prefix)
libdir=$(option libdir)
prefix=$work/stage$prefix_setting
[ -d "$prefix" ] || { echo "no installed prefix at $prefix"; exit 1; }
echo "prefix: $prefix (libdir $libdir)"

step "installed layout"
for f in "$libdir/libet_ops.so.0" "$libdir/libet_kernels_quantized.so.0" "$libdir/libet_kernels_portable.so.0" \
         "$libdir/pkgconfig/et-ops.pc" "$libdir/pkgconfig/et-kernels-quantized.pc" \
         "$libdir/pkgconfig/et-kernels-portable.pc" "$libdir/cmake/et_ops/et_opsConfig.cmake" \
         "$libdir/cmake/et_ops/et_opsConfigVersion.cmake" "$libdir/cmake/et_ops/et_ops-config.cmake" \
         "$libdir/cmake/et_ops/et_ops-config-version.cmake" include/et_ops/registry.h include/et_ops/version.h \
         include/et_ops/kernels/quantized.h include/et_ops/kernels/portable.h include/et_ops/kernel_library.h \
         include/et_ops/schema.h include/et_ops/library_loader.h bin/et-ops bin/et-ops-fingerprint; do
  check "installed $f" test -e "$prefix/$f"
done
check "the Python module is installed" bash -c "find '$prefix' -name '_et_ops*.so' | grep -q ."
check "et-kernels-quantized.pc requires et-ops" grep -q '^Requires:.*et-ops' "$prefix/$libdir/pkgconfig/et-kernels-quantized.pc"
check "sonames are versioned" bash -c "readelf -d '$prefix/$libdir/libet_kernels_quantized.so.0' | grep -q 'SONAME.*libet_kernels_quantized.so.0'"

step "the xnnpack kernel set: its own component"
for f in "$libdir/libet_kernels_xnnpack.so.0" "$libdir/pkgconfig/et-kernels-xnnpack.pc" include/et_ops/kernels/xnnpack.h \
         include/et_ops/profile.h; do
  check "installed $f" test -e "$prefix/$f"
done
check "et-kernels-xnnpack.pc requires et-ops" grep -q '^Requires:.*et-ops' "$prefix/$libdir/pkgconfig/et-kernels-xnnpack.pc"
check "pkg-config --libs et-kernels-xnnpack names the library" bash -c \
  "PKG_CONFIG_PATH='$prefix/$libdir/pkgconfig' pkg-config --libs et-kernels-xnnpack | grep -q -- -let_kernels_xnnpack"
mkdir -p "$work/cmake_xnnpack"
cat > "$work/cmake_xnnpack/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(xnnpack_consumer CXX)
find_package(et_ops REQUIRED COMPONENTS kernels_xnnpack)
add_executable(xnnpack_consumer main.cpp)
target_link_libraries(xnnpack_consumer PRIVATE et_ops::kernels_xnnpack)
CMAKE
cat > "$work/cmake_xnnpack/main.cpp" <<'CPP'
#include <et_ops/kernels/xnnpack.h>
#include <et_ops/registry.h>
int main() { return et_ops::kernels::xnnpack::register_kernels().ok() && et_ops::has_operator("et_xnnpack::conv2d.out") ? 0 : 1; }
CPP
check "CMake component kernels_xnnpack configures" cmake -S "$work/cmake_xnnpack" -B "$work/cmake_xnnpack/build" \
  -Det_ops_DIR="$prefix/$libdir/cmake/et_ops" -DCMAKE_BUILD_TYPE=Release
check "CMake component kernels_xnnpack builds" cmake --build "$work/cmake_xnnpack/build"
check "a CMake consumer registers the xnnpack kernels" env LD_LIBRARY_PATH="$prefix/$libdir" \
  "$work/cmake_xnnpack/build/xnnpack_consumer"

step "every installed header compiles on its own"
while IFS= read -r header; do
  relative=${header#"$prefix/include/"}
  check "header $relative" bash -c "echo '#include <$relative>' | g++ -std=c++17 -Wall -Wextra -Werror -fsyntax-only -I'$prefix/include' -x c++ -"
done < <(find "$prefix/include/et_ops" -name '*.h' | sort)

step "every exported function has a definition in the shipped libraries"
/usr/bin/python3 "$root/scripts/check_api_definitions.py" "$prefix/include" "$work/api_addresses.cpp"
check "exported API links" g++ -std=c++17 -I"$prefix/include" "$work/api_addresses.cpp" -o "$work/api_addresses" \
  -L"$prefix/$libdir" -let_kernels_quantized -let_kernels_portable -let_kernels_xnnpack -let_ops -Wl,--no-as-needed

export LD_LIBRARY_PATH=$prefix/$libdir
step "ownership table of the shipped kernel libraries"
check "et-ops check: every operator provided by exactly one library" "$prefix/bin/et-ops" check
mkdir -p "$work/partial"
cp -a "$prefix/." "$work/partial/"
rm "$work/partial/$libdir"/libet_kernels_portable.so*
if LD_LIBRARY_PATH=$work/partial/$libdir "$work/partial/bin/et-ops" check; then
  fail "et-ops check must fail when a shipped library is missing"
else
  pass "et-ops check fails when a shipped library is missing"
fi

run_consumer() {  # run_consumer BINARY NAME: runs the example program, keeps the output
  "$1" "$program" "$program_input" "$work/$2.npy"
}

step "pkg-config consumer"
mkdir -p "$work/pkgconfig"
cp "$root/test/consumers/pkgconfig/Makefile" "$root/examples/consumer/main.cpp" "$work/pkgconfig/"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
check "pkg-config consumer builds" make -s -C "$work/pkgconfig"
check "pkg-config consumer runs the quantized example" run_consumer "$work/pkgconfig/consumer" pkgconfig
python_matches_consumer() {  # the Python module gives the same bytes as the C++ consumer
  PYTHONPATH=$build/src/python LD_LIBRARY_PATH= /usr/bin/python3 - "$program" "$program_input" "$1" <<'PY'
import sys
import numpy as np
import et_ops
program, program_input, consumer_output = sys.argv[1:]
from_python = et_ops.load(program).run([np.load(program_input)])[0]
from_cpp = np.load(consumer_output)
same = from_python.dtype == from_cpp.dtype and from_python.shape == from_cpp.shape
sys.exit(0 if same and from_python.tobytes() == from_cpp.tobytes() else 1)
PY
}
check "Python and the pkg-config consumer give byte-identical outputs" python_matches_consumer "$work/pkgconfig.npy"
moved=$work/moved/prefix
mkdir -p "$work/moved"
mv "$prefix" "$moved"
export PKG_CONFIG_PATH=$moved/$libdir/pkgconfig LD_LIBRARY_PATH=$moved/$libdir
include_flag=$(pkg-config --cflags-only-I et-kernels-quantized | tr ' ' '\n' | grep -- '^-I' | head -n1)
check "pkg-config points into the moved prefix" test "$(realpath "${include_flag#-I}")" = "$moved/include"
make -s -C "$work/pkgconfig" clean
check "pkg-config consumer rebuilds after the prefix moved" make -s -C "$work/pkgconfig"
check "and runs" run_consumer "$work/pkgconfig/consumer" pkgconfig_moved
check "same output before and after the move" cmp "$work/pkgconfig.npy" "$work/pkgconfig_moved.npy"
mv "$moved" "$prefix"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig LD_LIBRARY_PATH=$prefix/$libdir

step "Meson consumer against the installed prefix"
cp -r "$root/test/consumers/meson_wrap" "$work/meson_installed"
cp "$root/examples/consumer/main.cpp" "$work/meson_installed/"
check "meson consumer configures against the prefix" meson setup "$work/meson_installed/build" "$work/meson_installed" --wrap-mode=nofallback
check "meson consumer builds" ninja -C "$work/meson_installed/build"
check "meson consumer runs" run_consumer "$work/meson_installed/build/consumer" meson_installed

step "Meson consumer with et_ops as a wrap subproject from meson dist"
meson dist -C "$build" --no-tests --formats gztar --allow-dirty >/dev/null
tarball=$(ls "$build"/meson-dist/et_ops-*.tar.gz)
consumer=$work/meson_wrap
cp -r "$root/test/consumers/meson_wrap" "$consumer"
cp "$root/examples/consumer/main.cpp" "$consumer/"
mkdir -p "$consumer/subprojects/packagecache"
cp "$tarball" "$consumer/subprojects/packagecache/"
name=$(basename "$tarball")
sed -e "s|@FILENAME@|$name|g" -e "s|@DIRECTORY@|${name%.tar.gz}|" \
    -e "s|@SHA256@|$(sha256sum "$tarball" | cut -d' ' -f1)|" \
    "$consumer/subprojects/et_ops.wrap.in" > "$consumer/subprojects/et_ops.wrap"
rm "$consumer/subprojects/et_ops.wrap.in"
(
  unset PKG_CONFIG_PATH LD_LIBRARY_PATH
  check "wrap consumer configures from the tarball" meson setup "$consumer/build" "$consumer"
  check "wrap consumer uses the subproject" grep -q "et_ops" "$consumer/build/meson-logs/meson-log.txt"
  check "wrap consumer builds" ninja -C "$consumer/build"
  check "wrap consumer runs" run_consumer "$consumer/build/consumer" meson_wrap
  echo "$passed $failed" > "$work/wrap_counts"
)
read -r passed failed < "$work/wrap_counts"
check "a corrupted tarball is refused (sha256 checked)" bash -c "
  cp -r '$consumer' '$work/corrupt' && rm -rf '$work/corrupt/build' '$work/corrupt/subprojects/${name%.tar.gz}' &&
  echo x >> '$work/corrupt/subprojects/packagecache/$name' &&
  ! env -u PKG_CONFIG_PATH meson setup '$work/corrupt/build' '$work/corrupt' >/dev/null 2>&1"

step "CMake consumers"
cmake_build() {  # cmake_build SOURCE BINARY
  cmake -S "$1" -B "$2" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null && cmake --build "$2" >/dev/null
}
cp -r "$root/test/consumers/cmake/targets" "$work/cmake_targets"
cp "$root/examples/consumer/main.cpp" "$work/cmake_targets/"
check "CMake targets consumer builds" cmake_build "$work/cmake_targets" "$work/cmake_targets/build"
check "CMake targets consumer runs" run_consumer "$work/cmake_targets/build/consumer" cmake_targets
cp -r "$root/test/consumers/cmake/variables" "$work/cmake_variables"
check "CMake variables consumer builds" cmake_build "$work/cmake_variables" "$work/cmake_variables/build"
check "CMake variables consumer runs" "$work/cmake_variables/build/variables_consumer"
needed=$(readelf -d "$work/cmake_variables/build/variables_consumer" | grep NEEDED)
check "linking \${ET_OPS_LIBRARIES} pulls in the portable kernels" grep -q libet_kernels_portable <<<"$needed"
check "linking \${ET_OPS_LIBRARIES} does not pull in the quantized kernels" bash -c "! grep -q libet_kernels_quantized <<<'$needed'"
check "ET_OPS_QUANTIZED_KERNELS_LIBRARY is the installed library" \
  test "$(cat "$work/cmake_variables/build/quantized_library.txt")" -ef "$prefix/$libdir/libet_kernels_quantized.so.0"

find_package_fails() {  # find_package_fails ARGS EXPECTED_TEXT
  mkdir -p "$work/fp"
  printf 'cmake_minimum_required(VERSION 3.16)\nproject(fp CXX)\nfind_package(et_ops %s)\n' "$1" > "$work/fp/CMakeLists.txt"
  rm -rf "$work/fp/build"
  local output
  if output=$(cmake -S "$work/fp" -B "$work/fp/build" -DCMAKE_PREFIX_PATH="$prefix" 2>&1); then return 1; fi
  grep -q "$2" <<<"$output"
}
check "an unknown component fails with a message" find_package_fails "REQUIRED COMPONENTS bogus" "no component 'bogus'"
check "a too-new version fails with a message" find_package_fails "9.0 REQUIRED" "9.0"

step "a third-party kernel library (examples/custom_kernels) built three ways"
example=$root/examples/custom_kernels
custom_program=$example/custom.etp
custom_input=$example/custom_input_0.npy
installed_python=$(dirname "$(dirname "$(find "$prefix" -name '_et_ops*.so' | head -n1)")")
custom_build() {  # custom_build WAY DIR: builds the example in DIR; prints the library's path
  rm -rf "$2" && cp -r "$example" "$2"
  case $1 in
    make) make -s -C "$2" >/dev/null && echo "$2/libacme_kernels.so" ;;
    meson) meson setup "$2/build" "$2" >/dev/null && ninja -C "$2/build" >/dev/null && echo "$2/build/libacme_kernels.so" ;;
    cmake) cmake -S "$2" -B "$2/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null && cmake --build "$2/build" >/dev/null &&
           echo "$2/build/libacme_kernels.so" ;;
  esac
}
custom_run() {  # custom_run LIBRARY NAME: et-ops runs the program with the library; keeps the output
  "$prefix/bin/et-ops" run "$custom_program" --load-library "$1" --input "$custom_input" --output-dir "$work/$2" >/dev/null
}
custom_python() {  # custom_python LIBRARY CLI_OUTPUT: the installed Python module gives the same bytes
  PYTHONPATH=$installed_python /usr/bin/python3 - "$1" "$custom_program" "$custom_input" "$2" <<'PY'
import sys
import numpy as np
import et_ops
library, program, program_input, cli_output = sys.argv[1:]
et_ops.load_library(library)
out = et_ops.load(program).run([np.load(program_input)])[0]
sys.exit(0 if out.tobytes() == np.load(cli_output).tobytes() else 1)
PY
}
for way in make meson cmake; do
  if library=$(custom_build $way "$work/custom_$way") && [ -f "$library" ]; then
    pass "the example builds with $way"
    check "et-ops run --load-library runs its program ($way)" custom_run "$library" "custom_$way"
    check "Python runs it with the same bytes ($way)" custom_python "$library" "$work/custom_$way/output_0.npy"
  else
    fail "the example builds with $way"
  fi
done
check "the three builds give the same output" bash -c "cmp '$work/custom_make/output_0.npy' '$work/custom_meson/output_0.npy' &&
  cmp '$work/custom_meson/output_0.npy' '$work/custom_cmake/output_0.npy'"

step "copies of the third-party library under both policies"
original=$work/custom_meson/build/libacme_kernels.so
byte_copy=$work/custom_copy/libacme_kernels_copy.so
mkdir -p "$work/custom_copy" && cp "$original" "$byte_copy"
rebuilt=$(custom_build meson "$work/custom_rebuilt")
modified_dir=$work/custom_modified
rm -rf "$modified_dir" && cp -r "$example" "$modified_dir"
sed -i 's/\* f;/* f * 2.0f;/' "$modified_dir/acme_kernels.cpp"
meson setup "$modified_dir/build" "$modified_dir" >/dev/null && ninja -C "$modified_dir/build" >/dev/null
modified=$modified_dir/build/libacme_kernels.so
two_copies() {  # two_copies POLICY SECOND: et-ops with the original and SECOND; prints stderr, keeps the status
  "$prefix/bin/et-ops" run "$custom_program" --policy "$1" --load-library "$original" --load-library "$2" \
    --input "$custom_input" 2>&1 >/dev/null
}
deduplicated() {  # the second copy's records are identical copies kept behind the first
  "$prefix/bin/et-ops" ops --json --policy first-wins --load-library "$original" --load-library "$1" |
    /usr/bin/python3 -c "
import json, os, sys
records = [r for r in json.load(sys.stdin)['operators'] if r['component'] == 'acme_kernels']
second = [r for r in records if os.path.samefile(r['library'], sys.argv[1])]
sys.exit(0 if len(records) == 4 and len(second) == 2 and not any(r['active'] for r in second) else 1)" "$1"
}
aborts() {  # under fatal: one abort naming the operator
  local output status=0
  output=$(two_copies fatal "$1") || status=$?
  [ "$status" -eq 134 ] && grep -q "^Re-registering acme::" <<<"$output"
}
for copy in byte_copy rebuilt; do
  second=${!copy}
  check "first-wins: the $copy runs beside the original" two_copies first-wins "$second"
  check "first-wins: the $copy is deduplicated" deduplicated "$second"
  check "fatal: the $copy aborts with 'Re-registering'" aborts "$second"
done
check "the byte copy and the rebuild have the original's fingerprints" bash -c "
  for lib in '$byte_copy' '$rebuilt'; do
    '$prefix/bin/et-ops' check '$original' \"\$lib\" --json | /usr/bin/python3 -c '
import json, sys
c = json.load(sys.stdin)[\"collisions\"]
sys.exit(0 if len(c) == 2 and all(x[\"identical\"] for x in c) else 1)' || exit 1
  done"
check "first-wins: a modified rebuild is rejected as a conflict" bash -c "
  out=\$('$prefix/bin/et-ops' run '$custom_program' --policy first-wins --load-library '$original' \
    --load-library '$modified' --input '$custom_input' 2>&1); [ \$? -eq 1 ] && grep -q 'Rejected the kernels of component acme_kernels' <<<\"\$out\""
python_copies() {  # from Python: the byte copy is deduplicated under first-wins, the modified one rejected
  PYTHONPATH=$installed_python /usr/bin/python3 - "$original" "$byte_copy" "$modified" <<'PY'
import sys
import et_ops
original, copy, modified = sys.argv[1:]
et_ops.set_duplicate_policy("first-wins")
assert et_ops.load_library(original)["registered"] == 2
assert et_ops.load_library(copy)["deduplicated"] == 2
try:
    et_ops.load_library(modified)
    sys.exit(1)
except et_ops.LibraryError as e:
    sys.exit(0 if e.reason == "conflict" else 1)
PY
}
check "Python: first-wins deduplicates the byte copy and rejects the modified rebuild" python_copies
check "Python: fatal aborts on the byte copy" bash -c "
  out=\$(PYTHONPATH='$installed_python' /usr/bin/python3 -c \"
import et_ops
et_ops.set_duplicate_policy('fatal')
et_ops.load_library('$original')
et_ops.load_library('$byte_copy')\" 2>&1); [ \$? -eq 134 ] && grep -q '^Re-registering acme::' <<<\"\$out\""

summary packaging
