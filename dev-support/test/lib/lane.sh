# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Verdicts of the lanes with real daemons (e2e-tarball.sh, multihost.sh), sourced: each check
# prints "ok"/"FAIL", counts into passed/failed and names the failures for the summary.

passed=0
failed=0
failures=()

## pass NAME
pass() {
  passed=$((passed + 1))
  echo "  ok   $1"
}

## fail NAME [DETAILS]: DETAILS' last 25 lines indented under the verdict.
fail() {
  failed=$((failed + 1))
  failures+=("$1")
  echo "  FAIL $1"
  [[ -n "${2:-}" ]] && printf '%s\n' "$2" | sed 's/^/       | /' | tail -n 25
  return 0
}
