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

## wait_bounded PID SECONDS: waits for PID (a background job of this shell) at most SECONDS;
## its exit code, or 124 when it ran over (then it is killed: TERM, KILL 3 s later).
wait_bounded() {
  local pid=$1 limit=$2 t0=${SECONDS}
  while kill -0 "${pid}" 2>/dev/null; do
    if ((SECONDS - t0 >= limit)); then
      kill -TERM "${pid}" 2>/dev/null
      sleep 3
      kill -KILL "${pid}" 2>/dev/null
      wait "${pid}" 2>/dev/null
      return 124
    fi
    sleep 0.5
  done
  wait "${pid}"
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
