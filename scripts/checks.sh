# The check helpers of the CI scripts (test-packaging.sh, test-wheel.sh),
# sourced by them: every check counts, and summary fails the script when
# any check failed.
passed=0
failed=0

step() { printf '\n=== %s\n' "$*"; }
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*"; }
check() {  # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
summary() {  # summary NAME: prints the counts; fails when a check failed
  printf '\n%s: %d passed, %d failed\n' "$1" "$passed" "$failed"
  [ "$failed" -eq 0 ]
}
