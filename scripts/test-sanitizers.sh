#!/usr/bin/env bash
# Sanitizer CI (docs/hardening.md), called by scripts/test.sh after the
# normal test run. Exits non-zero on the first sanitizer report or failing
# test.
#
# 1. AddressSanitizer + UndefinedBehaviorSanitizer (gcc), in two steps:
#    a. the registry, runtime, tools, fuzz-replay and kernel library kit
#       suites: the C++ that parses programs, .npy files and command lines,
#       reads kernels' arguments and indexes the registry. The first report
#       stops the test process (halt_on_error, abort_on_error),
#       LeakSanitizer checks every test process at exit. The kernel sets'
#       own suites (portable, quantized, xnnpack) are left out: over ten
#       minutes of instrumented compiling and testing (five of a 2-core
#       machine's wall clock), most of it cross-checks of their numbers,
#       while every operator of the three sets runs under ASan and UBSan
#       in the fuzz build, called with random shapes and arguments
#       (scripts/fuzz-smoke.sh), and here under the fuzz suite's replay of
#       their corpora and regression inputs, the runtime suite's programs
#       and, in step b, the Python tests that run low-bit, attention and
#       quantized programs. One kernel test runs: lowbit_linear_test (the
#       low-bit linears' packing and microkernels, whose tails and padding
#       random arguments rarely reach).
#    b. the tests that load the instrumented libraries into Python (suite
#       'python': the extension module's tests, custom_kernels, the ctypes
#       torch_crosscheck) with gcc's ASan and UBSan runtimes LD_PRELOADed into
#       /usr/bin/python3, which is not instrumented: the ASan runtime must
#       be the first library the process loads. The children these tests
#       start (et-ops, python3 -m et_ops.export) inherit the runtimes.
#       LeakSanitizer is off in this step: CPython and torch keep
#       allocations until exit by design, so every report at exit would be
#       theirs; the leaks of et_ops's own code are checked in step a. The
#       same halt-on-first-report options as step a otherwise.
#       Left out of step b, one reason each (measured with this script on a
#       2-core machine, docs/hardening.md):
#       - python_docs: check_docs.py follows each page in a clean
#         environment (scratch HOME, the system PATH), which drops
#         LD_PRELOAD: the pages' first `import et_ops` stops with "ASan
#         runtime does not come first in initial library list". The
#         module calls the pages make are python_module's.
#       - python_install: `meson install --no-rebuild` needs every
#         installed file, and this build has only what its tests need: it
#         fails with "File 'tools/completion/et-ops' could not be found".
#         The installed package loads the same libraries from elsewhere.
#       - python_exporter (341 s under ASan), python_transformers (222 s),
#         python_examples (549 s) and python_numerics (853 s): together
#         over half an hour of test time, which would take CI past its
#         budget. Most of it is PyTorch quantizing, tracing and computing
#         references (the last three once per ATEN_CPU_CAPABILITY, examples
#         also per BLAS and with FMA off), which is not instrumented. What
#         of ours they run, loading and running exported programs on the
#         portable, quantized and xnnpack kernels, the tests that do run
#         here run too, on smaller programs.
#       - python_xnnpack_backend (59 s) and python_language_model (52 s):
#         torchvision's and a decoder's whole models, each tested once at
#         full size in the normal run; the loader, the run states and the
#         kernels they reach run here on small programs (python_module,
#         python_lowbit_fusion, python_attention_fusion, the runtime and
#         kernel suites of step a).
#       - embedded_python: its two plugins are whole copies of the quantized
#         kernels, which this build would compile twice more (over four
#         minutes of compile time); what it checks of the registry (copies
#         deduplicated or rejected, by fingerprint) the registry suite's
#         kernel-library copies check in step a.
# 2. ThreadSanitizer (gcc): the tests that run threads at once: registry
#    lookups against registration and unregistration, and one program run
#    from several threads (the runtime's test kernels, and the example
#    programs on the project's kernels). This build keeps -Dpython=false:
#    none of those tests uses the Python module, which only adds compile
#    time here.
#
# Environment: ASAN_BUILD_DIR (default build-asan), TSAN_BUILD_DIR (default
# build-tsan), JOBS (parallel compile jobs and test processes, default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

asan_build=${ASAN_BUILD_DIR:-build-asan}
tsan_build=${TSAN_BUILD_DIR:-build-tsan}
jobs=${JOBS:-$(nproc)}
# -O1 and line tables (-g1): exact reports with file:line stack traces, and
# a build that fits CI; assertions stay on. Three UBSan checks are left out
# because they triple gcc's compile time (Catch2 and the kernel tests) and
# add nothing here: vptr (et_ops has no polymorphic classes), null
# (AddressSanitizer reports every null dereference as a SEGV with a stack)
# and object-size (AddressSanitizer checks the same bounds exactly).
common=(-Doptimization=1 -Ddebug=false -Db_ndebug=false -Db_lundef=false -Dbenchmarks=false
        -Dpython_interpreter=/usr/bin/python3)
ubsan_scope=-fno-sanitize=vptr,null,object-size
# Highway compiles each SIMD kernel once per x86 target; these builds keep
# AVX2 (the widest path an AVX2-only CI machine runs) and the baseline. The
# other targets' code is the same Highway source at other vector widths,
# every target runs in the normal build's kernel tests, and this halves the
# instrumented compiling of the kernel libraries.
simd_scope='-DHWY_DISABLED_TARGETS=(HWY_AVX3_DL|HWY_AVX3|HWY_SSE4|HWY_SSSE3)'

configure() {  # configure BUILD_DIR OPTION...
  local dir=$1
  shift
  if [ -f "$dir/build.ninja" ]; then
    meson setup "$dir" --reconfigure "$@"
  else
    meson setup "$dir" "$@"
  fi
}

elapsed() { printf '%s: %d s\n' "$1" "$((SECONDS - $2))"; }
total_start=$SECONDS

# meson test builds only the targets the selected tests need, with the
# ninja that $NINJA names: this one keeps it to $jobs compile jobs.
wrapper_dir=$(mktemp -d)
trap 'rm -rf "$wrapper_dir"' EXIT
printf '#!/bin/sh\nexec ninja -j %s "$@"\n' "$jobs" > "$wrapper_dir/ninja"
chmod +x "$wrapper_dir/ninja"
export NINJA="$wrapper_dir/ninja"

echo "=== AddressSanitizer + UndefinedBehaviorSanitizer"
start=$SECONDS
configure "$asan_build" "${common[@]}" -Dpython=true -Db_sanitize=address,undefined "-Dcpp_args=-g1 $ubsan_scope $simd_scope"
ubsan_options=halt_on_error=1:print_stacktrace=1
step_a_env=(ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=$ubsan_options)
env "${step_a_env[@]}" meson test -C "$asan_build" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 3 \
  --suite registry --suite runtime --suite tools --suite fuzz --suite kit --no-suite python
# One kernel test stays (see above).
env "${step_a_env[@]}" meson test -C "$asan_build" --print-errorlogs --timeout-multiplier 3 lowbit_linear_test
elapsed "ASan + UBSan build and tests" "$start"

echo "=== Python under AddressSanitizer + UndefinedBehaviorSanitizer"
start=$SECONDS
# The runtimes of the compiler that built $asan_build (Meson's default, c++).
preload=$("${CXX:-c++}" -print-file-name=libasan.so):$("${CXX:-c++}" -print-file-name=libubsan.so)
# Step b's tests: every test of suite python but those left out above.
excluded=(python_docs python_install python_exporter python_transformers python_examples python_numerics
          python_xnnpack_backend python_language_model)
mapfile -t python_tests < <(meson test -C "$asan_build" --list --suite python 2>/dev/null |
                            sed -n 's|^et_ops:.* / ||p' | grep -vxF -f <(printf '%s\n' "${excluded[@]}"))
if [ "${#python_tests[@]}" -eq 0 ]; then
  echo "no Python tests in $asan_build: is it configured with -Dpython=true?" >&2
  exit 1
fi
ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=0 UBSAN_OPTIONS=$ubsan_options \
  meson test -C "$asan_build" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 3 \
    --wrapper "env LD_PRELOAD=$preload" "${python_tests[@]}"
elapsed "Python under ASan + UBSan" "$start"

echo "=== ThreadSanitizer"
start=$SECONDS
configure "$tsan_build" "${common[@]}" -Dpython=false -Db_sanitize=thread "-Dcpp_args=-g1 $simd_scope"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
# The registry's 8-thread test, and the example programs from 4 threads.
meson test -C "$tsan_build" --print-errorlogs --num-processes "$jobs" --timeout-multiplier 3 \
  concurrency concurrent_runs
# program_run_test's own threads test (its other tests fork or count
# allocations, which says nothing about threads); --warn NoTests fails the
# run if the test is ever renamed.
meson test -C "$tsan_build" --print-errorlogs --timeout-multiplier 3 program_run \
  --test-args '--warn NoTests "several threads running one program with their own states match a serial run"'
elapsed "TSan build and tests" "$start"

elapsed "sanitizers in total" "$total_start"
