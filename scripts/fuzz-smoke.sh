#!/usr/bin/env bash
# Fuzz smoke test (docs/hardening.md), called by scripts/test.sh: builds the
# libFuzzer targets with clang-14, AddressSanitizer and UBSan, runs each for
# FUZZ_SECONDS (default 60) or FUZZ_RUNS inputs (default 100000), whichever
# comes first, on a scratch copy of its seed corpus and its
# regression inputs, and fails if any target crashes. A crashing input is
# kept in BUILD/fuzz-artifacts/<target>/: fix the bug, then add the input
# to test/fuzz/regressions/<target>/ so every build replays it.
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_SECONDS, FUZZ_RUNS,
# JOBS (compile jobs, default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

build=${FUZZ_BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
runs=${FUZZ_RUNS:-100000}
jobs=${JOBS:-$(nproc)}
targets=(etp_loader npy_reader quantized_kernels portable_kernels xnnpack_kernels state_writes)
# As in scripts/test-sanitizers.sh: -O1, line tables, assertions on, UBSan
# without the checks that only cost compile time here.
options=(-Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false -Doptimization=1 -Ddebug=false
         -Db_ndebug=false "-Dcpp_args=-g1 -fno-sanitize=vptr,null,object-size" -Dbenchmarks=false -Dpython=false
         -Dpython_interpreter=/usr/bin/python3)

start=$SECONDS
if [ -f "$build/build.ninja" ]; then
  meson setup "$build" --reconfigure "${options[@]}"
else
  CXX=clang++-14 meson setup "$build" "${options[@]}"
fi
ninja -C "$build" -j "$jobs" "${targets[@]/#/test/fuzz/fuzz_}"
printf 'fuzz targets built: %d s\n' "$((SECONDS - start))"

export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
  echo "=== fuzz_$target: $seconds s or $runs runs"
  corpus=$scratch/$target/corpus
  artifacts=$build/fuzz-artifacts/$target
  mkdir -p "$corpus" "$artifacts"
  for seeds in test/fuzz/corpus/"$target" test/fuzz/regressions/"$target"; do
    if [ -d "$seeds" ]; then cp -R "$seeds"/. "$corpus"/; fi
  done
  log=$scratch/$target.log
  # -timeout: an input that runs a minute is a hang, and a finding too.
  if "$build/test/fuzz/fuzz_$target" -max_total_time="$seconds" -runs="$runs" -timeout=60 -rss_limit_mb=2048 \
       -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" > "$log" 2>&1; then
    grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
  else
    tail -n 60 "$log"
    echo "fuzz_$target found a crash; the input is in $artifacts/"
    failed+=("$target")
  fi
done
printf 'fuzz smoke in total: %d s\n' "$((SECONDS - start))"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
