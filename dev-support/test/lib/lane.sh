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

## await_line FILE REGEX SECONDS: true as soon as FILE has a line matching REGEX (grep -E),
## false when it has none after SECONDS (checked every 0.5 s).
await_line() {
  local file=$1 regex=$2 tries=$(($3 * 2)) _
  for _ in $(seq "${tries}"); do
    grep -qE "${regex}" "${file}" 2>/dev/null && return 0
    sleep 0.5
  done
  grep -qE "${regex}" "${file}" 2>/dev/null
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

## Lean JVMs for a lane's cluster: C1 only and a serial collector. Its JVMs live seconds
## (clients, tasks) to minutes (daemons) on 2 cores, where C2's compilations cost more CPU than
## they win back (the VM lane and the Maven forks do the same; timing only, nothing a check
## reads). LANE_JVM is the options; lean_jvms CONF_DIR puts them into a Hadoop configuration
## directory: hadoop-env.sh's HADOOP_OPTS for daemons and clients, and mapred-site.xml's admin
## options (stock's otherwise) for tasks and ApplicationMasters, which come before a job's own.
LANE_JVM="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
lean_jvms() {
  local conf=$1 stock="-Djava.net.preferIPv4Stack=true -Dhadoop.metrics.log.level=WARN" p=""
  # shellcheck disable=SC2016 # HADOOP_OPTS is expanded by hadoop-env.sh, not here
  printf '\n# the test lane: %s\nexport HADOOP_OPTS="${HADOOP_OPTS:-} %s"\n' \
    "lean JVMs (dev-support/test/lib/lane.sh)" "${LANE_JVM}" >>"${conf}/hadoop-env.sh"
  p+="<property><name>mapreduce.admin.map.child.java.opts</name><value>${stock} ${LANE_JVM}</value></property>"
  p+="<property><name>mapreduce.admin.reduce.child.java.opts</name><value>${stock} ${LANE_JVM}</value></property>"
  p+="<property><name>yarn.app.mapreduce.am.admin-command-opts</name><value>${LANE_JVM}</value></property>"
  sed -i "s|</configuration>|  ${p}\n</configuration>|" "${conf}/mapred-site.xml"
}
