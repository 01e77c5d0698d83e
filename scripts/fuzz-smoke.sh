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
source scripts/fuzz-config.sh

start=$SECONDS
fuzz_build "$build" "$jobs"
printf 'fuzz targets built: %d s\n' "$((SECONDS - start))"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${fuzz_targets[@]}"; do
  echo "=== fuzz_$target: $seconds s or $runs runs"
  corpus=$scratch/$target/corpus
  artifacts=$build/fuzz-artifacts/$target
  mkdir -p "$artifacts"
  fuzz_seed "$target" "$corpus"
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
