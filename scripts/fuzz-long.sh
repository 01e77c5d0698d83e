#!/usr/bin/env bash
# Release fuzzing (docs/hardening.md), not part of CI: runs every libFuzzer
# target in turn for MINUTES minutes each (default 10) on all the CPUs
# (libFuzzer's fork mode, JOBS processes), with the smoke run's build and
# sanitizer options (scripts/fuzz-config.sh), on a corpus that grows from
# run to run outside the repository, then prints a summary table:
# executions, coverage (edges), features, corpus size and findings.
# Findings (crash-*, leak-*, timeout-*, oom-*) are kept in
# BUILD/fuzz-artifacts/<target>/; fix each, then add the input to
# test/fuzz/regressions/<target>/. Exits non-zero when any target found one.
#
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_CORPUS_DIR (default
# ~/.cache/et_ops/fuzz-corpus), JOBS (default: the number of CPUs).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${1:-10}
if ! [[ $minutes =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/fuzz-long.sh [MINUTES]   (whole minutes per target, default 10)" >&2
  exit 2
fi
scripts/install-deps.sh

build=${FUZZ_BUILD_DIR:-build-fuzz}
corpora=${FUZZ_CORPUS_DIR:-$HOME/.cache/et_ops/fuzz-corpus}
jobs=${JOBS:-$(nproc)}
source scripts/fuzz-config.sh
fuzz_build "$build" "$jobs"

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
rows=()
failed=()
for target in "${fuzz_targets[@]}"; do
  echo "=== fuzz_$target: $minutes min on $jobs processes, corpus $corpora/$target"
  corpus=$corpora/$target
  artifacts=$build/fuzz-artifacts/$target
  mkdir -p "$artifacts"
  fuzz_seed "$target" "$corpus"
  before=$(find "$artifacts" -type f | wc -l)
  log=$logs/$target.log
  # Fork mode merges each job's new inputs into the corpus and reports the
  # totals on lines "#EXECS: cov: EDGES ft: FEATURES corp: INPUTS/SIZE ...".
  status=0
  "$build/test/fuzz/fuzz_$target" -fork="$jobs" -max_total_time=$((minutes * 60)) -timeout=60 -rss_limit_mb=2048 \
    -artifact_prefix="$artifacts/" "$corpus" > "$log" 2>&1 || status=$?
  findings=$(( $(find "$artifacts" -type f | wc -l) - before ))
  totals=$(grep -E '^#[0-9]+: cov: ' "$log" | tail -n 1 || true)
  executions=$(sed -nE 's/^#([0-9]+): .*/\1/p' <<< "$totals")
  coverage=$(sed -nE 's/.* cov: ([0-9]+) .*/\1/p' <<< "$totals")
  features=$(sed -nE 's/.* ft: ([0-9]+) .*/\1/p' <<< "$totals")
  inputs=$(sed -nE 's/.* corp: ([0-9]+).*/\1/p' <<< "$totals")
  if [ "$status" -ne 0 ] || [ "$findings" -gt 0 ]; then
    tail -n 40 "$log"
    failed+=("$target")
  fi
  rows+=("$(printf '| %s | %s | %s | %s | %s | %s | %s |' "fuzz_$target" "$minutes" "${executions:-?}" \
    "${coverage:-?}" "${features:-?}" "${inputs:-?}" "$findings")")
done
echo
echo "| target | minutes | executions | coverage (edges) | features | corpus inputs | findings |"
echo "|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FOUND: ${failed[*]} (inputs in $build/fuzz-artifacts/)"
  exit 1
fi
