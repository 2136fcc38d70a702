# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Verdicts of the lanes with real daemons (e2e-tarball.sh, multihost.sh, the VM lane's
# vm/guest-job.sh), sourced: each check prints "ok"/"FAIL", counts into passed/failed and names
# the failures for the summary; lane_conf writes their configuration overlays.

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

phases=()
phase_name=""
phase_t=${SECONDS}

## phase NAME: ends the running phase (printing its duration, kept in phases for the lane's
## summary) and starts NAME ("" = none).
phase() {
  if [[ -n "${phase_name}" ]]; then
    phases+=("$(printf '%4d s  %s' $((SECONDS - phase_t)) "${phase_name}")")
    echo "   (${phase_name}: $((SECONDS - phase_t)) s)"
  fi
  phase_name=$1
  phase_t=${SECONDS}
  [[ -n "${phase_name}" ]] && echo "== ${phase_name}"
  return 0
}

## lane_conf FILE NAME VALUE...: writes a Hadoop configuration file of these properties (a mode
## overlay for hpc-cluster.sh configure --base or apply-mode).
lane_conf() {
  local file=$1
  shift
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<configuration>'
    while [[ $# -gt 0 ]]; do
      printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"
      shift 2
    done
    echo '</configuration>'
  } >"${file}"
}
