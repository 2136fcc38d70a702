#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Runs inside the Soft-RoCE VM (step d of guest-run-tests.sh): one whole job over rxe0 as a user
# would run it. Unpacks the tarball's pseudo-distributed cluster on the guest's disk, binds every
# daemon to rxe0's IPv4 address, turns on the verbs transport (strict) for HDFS DataTransfer (the
# DataNode plugin and the clients' socket factory, strict, endpoint on the transfer port) and
# for the hpc shuffle (mode rdma-shuffle, strict), starts HDFS with sbin/start-dfs.sh (and leaves
# it running: the VM is powered off next), then runs the job HPC_VM_JOB names (test-rdma --job):
#   terasort (default, CI): guest-job-terasort.sh: sbin/start-yarn.sh once HDFS is up, with
#     TeraGen beside it (local job runner) -> TeraSort on YARN
#     (2 maps, 2 reduces) with the hpc shuffle over verbs -> TeraValidate (local job runner),
#     input and output read back through WebHDFS (sorted, and the input's rows), the shuffle
#     counters;
#   hdfs: guest-job-hdfs.sh: a file put with bin/hadoop fs, read back with fs -cat and WebHDFS,
#     compared byte for byte with its source.
# Then checks what a user would check of HDFS: the DataNode's log line and activity bean (bytes
# over verbs, no fallback), the clients' logs (verbs, no refused stream), and rxe0's own packet
# counters growing by at least what the bytes need.
# Appends job_* keys to RESULTS (read by dev-support/bin/test-rdma).
#
# Usage: guest-job.sh TARBALL WORKDIR RESULTS
# Environment: HPC_VM_JOB_ROWS (TeraGen rows of 100 bytes, default 50000 = 5 MB),
# HPC_VM_JOB (terasort or hdfs, default terasort), HPC_VM_JOB_TIMEOUT (seconds one client command
# or job may take, default 900: a hang guard, sized
# for TCG, whose times swing; TeraSort took 393, 495 and, with its ApplicationMaster 4 minutes
# in starting, over 609 s in three CI runs on this kind of 2-core host).
set -u
tarball=${1:?usage: guest-job.sh TARBALL WORKDIR RESULTS}
work=${2:?usage: guest-job.sh TARBALL WORKDIR RESULTS}
results=${3:?usage: guest-job.sh TARBALL WORKDIR RESULTS}
device=rxe0
rows=${HPC_VM_JOB_ROWS:-50000}
job_kind=${HPC_VM_JOB:-terasort}
job_timeout=${HPC_VM_JOB_TIMEOUT:-900}
counters="/sys/class/infiniband/${device}/ports/1/hw_counters"
if [[ -z "${JAVA_HOME:-}" ]]; then
  JAVA_HOME=$(readlink -f "$(command -v java)")
  JAVA_HOME=${JAVA_HOME%/bin/java}
fi
export JAVA_HOME

here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=guest-lib.sh
. "${here}/guest-lib.sh"
# shellcheck source=../test/lib/lane.sh
. "${here}/../test/lib/lane.sh"

t_job=$(now)
t_step=${t_job}
steps=()

## step NAME: closes the running step (its seconds go to the summary) and starts NAME.
step() {
  local t
  t=$(now)
  [[ -n "${step_name:-}" ]] &&
    steps+=("$(awk -v a="${t_step}" -v b="${t}" 'BEGIN { printf "%5.1f s", b - a }')  ${step_name}")
  step_name=$1
  t_step=${t}
  [[ -n "${step_name}" ]] && say "d. job: ${step_name} (MemAvailable $(mem_available_mb) MB)"
}

mem_available_mb() {
  awk '/^MemAvailable:/ { printf "%d", $2 / 1024 }' /proc/meminfo
}

## diagnose: what a failed step leaves to look at: memory, the kernel's OOM kills, JVM crash
## files and the JVMs still running.
diagnose() {
  echo "  -- diagnosis at $(date +%T)"
  free -m | sed 's/^/     | /'
  dmesg 2>/dev/null | grep -i -E 'out of memory|oom|killed process' | tail -n 5 | sed 's/^/     | /'
  find "${work}" "${PWD}" /tmp -maxdepth 2 -name 'hs_err_pid*.log' 2>/dev/null | while read -r f; do
    echo "     | ${f}:"
    head -n 20 "${f}" | sed 's/^/     |   /'
  done
  # shellcheck disable=SC2009  # ps gives each JVM's resident size, pgrep does not
  ps -eo pid,rss,etimes,args --sort=-rss 2>/dev/null | grep -E '[j]ava' | head -n 8 |
    cut -c 1-160 | sed 's/^/     | /'
}

## finish: the verdict into RESULTS; the job ran only if it got as far as its checks.
finish() {
  step ""
  printf '  %s\n' "${steps[@]}"
  result job_passed "${passed}"
  result job_failed "${failed}"
  result job_seconds "$(elapsed "${t_job}")"
  if [[ ${failed} -gt 0 ]]; then
    printf 'hpc-vm job: FAILED: %s\n' "${failures[@]}"
  fi
}

## give_up WHY: the job cannot go on; counted as a failure, never a skip.
give_up() {
  fail "$1" "${2:-}"
  diagnose
  finish
  exit 1
}

## hw NAME: one of rxe0's hardware counters (rxe has packet counts, no port_xmit_data).
hw() {
  cat "${counters}/$1" 2>/dev/null || echo -1
}

## counter LOG NAME: the value of a job counter printed by the job client.
counter() {
  sed -n "s/^[[:space:]]*$2=\\([0-9][0-9]*\\)\$/\\1/p" "$1" | tail -n 1
}

## http_get PORT PATH [SECONDS]: HTTP GET from a daemon on the device's address (bash
## /dev/tcp), given at most SECONDS (10).
http_get() {
  # shellcheck disable=SC2016  # expanded by the inner bash
  timeout "${3:-10}" bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$2" "$0" >&3
    cat <&3' "${ip}" "$1" "$2" 2>/dev/null
}

## webhdfs_cat PATH: the bytes of an HDFS file through WebHDFS (bash /dev/tcp, no JVM): the
## NameNode names the DataNode, whose answer's headers are read off before its body. 60 s each:
## the DataNode's first WebHDFS read starts its own HDFS client (its verbs transport and a
## NameNode connection), which took 10.8 s under TCG once.
webhdfs_cat() {
  local at
  at=$(http_get 9870 "/webhdfs/v1$1?op=OPEN&noredirect=true" 60 |
    sed -n 's|.*"Location" *: *"http://[^/]*\(/[^"]*\)".*|\1|p')
  [[ -n "${at}" ]] || return 1
  # shellcheck disable=SC2016  # expanded by the inner bash
  timeout 60 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$2" "$0" >&3
    while IFS= read -r line <&3; do [[ -z "${line%$'"'"'\r'"'"'}" ]] && break; done
    cat <&3' "${ip}" 9864 "${at}" 2>/dev/null
}

## jmx_number JSON NAME: the first number field NAME of a JSON answer (JMX, WebHDFS).
jmx_number() {
  sed -n "s/.*\"$2\" *: *\\([0-9][0-9]*\\).*/\\1/p" <<<"$1" | head -n 1
}

## hadoop_job NAME LOG ARGS...: bin/hadoop jar of the examples, bounded in time (a hang over
## verbs is a failure of this step, not a stuck VM).
hadoop_job() {
  local name=$1 log=$2
  shift 2
  if timeout "${job_timeout}" "${H}/bin/hadoop" jar "${ex}" "$@" >"${log}" 2>&1; then
    pass "${name}"
  else
    fail "${name} (exit $?)" "$(tail -n 30 "${log}")"
    return 1
  fi
}

## packets_at_least WHAT BYTES: rxe0 sent and received, since the last mark, at least the
## packets BYTES need at the path MTU (every RDMA packet carries at most one MTU of payload).
hw_mark() {
  sent0=$(hw sent_pkts)
  rcvd0=$(hw rcvd_pkts)
}
packets_at_least() {
  local what=$1 bytes=$2 sent rcvd need
  sent=$(($(hw sent_pkts) - sent0))
  rcvd=$(($(hw rcvd_pkts) - rcvd0))
  need=$(((bytes + mtu - 1) / mtu))
  echo "    ${device} hw_counters during ${what}: sent_pkts +${sent}, rcvd_pkts +${rcvd}" \
    "(${bytes} bytes need >= ${need} packets of ${mtu} bytes)"
  result "job_${what}_sent_pkts" "${sent}"
  result "job_${what}_rcvd_pkts" "${rcvd}"
  [[ "${sent}" -ge "${need}" && "${rcvd}" -ge "${need}" ]] &&
    pass "${device} carried ${what}: sent_pkts +${sent}, rcvd_pkts +${rcvd} >= ${need}" ||
    fail "${device} carried ${what}: sent_pkts +${sent}, rcvd_pkts +${rcvd}, need >= ${need}"
}

step "unpack ${tarball##*/}"
# The device's address: every daemon binds it, so clients, mirrors and reducers reach it with
# rdma_cm (no RDMA device carries 127.0.0.1).
netdev=$(cat "/sys/class/infiniband/${device}/ports/1/gid_attrs/ndevs/1" 2>/dev/null)
ip=$(ip -4 -o addr show dev "${netdev:-eth0}" 2>/dev/null |
  awk '{ sub("/.*", "", $4); print $4; exit }')
mtu=$(ibv_devinfo -d "${device}" 2>/dev/null |
  sed -n 's/.*active_mtu:[[:space:]]*\([0-9]*\).*/\1/p')
[[ -n "${ip}" && "${mtu:-0}" -gt 0 && "$(hw sent_pkts)" -ge 0 ]] ||
  give_up "${device}: IPv4 address '${ip}' of ${netdev:-?}, active_mtu '${mtu}', ${counters}"
rm -rf "${work}"
mkdir -p "${work}"
tar xzf "${tarball}" -C "${work}" || give_up "unpack ${tarball}"
H=$(echo "${work}"/hadoop-hpc-*)
ex=$(echo "${H}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar)

step "configure: verbs on ${device} (${ip}), strict, hpc shuffle + HDFS over the transport"
conf="${H}/etc/hadoop"
sed -i "s/127\\.0\\.0\\.1/${ip}/g" "${conf}"/*.xml
echo "${ip}" >"${conf}/workers"
mkdir -p "${conf}/modes/vm-lane"
# Small JVMs for 4 GB and 2 vCPUs under TCG: C1 only, serial GC, small heaps and pools. A
# transfer stream's connect + HELLO may take 15 s (3 s by default, sized for real CPUs: TCG
# emulates these many times slower, and strict, one late HELLO fails a write).
jvm="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData"
lane_conf "${conf}/modes/vm-lane/core-site.xml" \
  hadoop.hpc.transport verbs \
  hadoop.hpc.transport.open.fails.without.verbs true \
  hadoop.hpc.transport.verbs.device "${device}" \
  hadoop.hpc.transport.buffer.pool.max 64m \
  hadoop.rpc.socket.factory.class.ClientProtocol org.hadoophpc.hdfs.transfer.RdmaSocketFactory
lane_conf "${conf}/modes/vm-lane/hdfs-site.xml" \
  dfs.datanode.plugins org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin \
  dfs.hpc.datatransfer.stream.fails.without.transport true \
  dfs.hpc.datatransfer.port.offset 0 \
  dfs.hpc.datatransfer.connect.timeout 15s \
  dfs.heartbeat.interval 1 \
  dfs.namenode.block.deletion.unlock.interval.ms 200
# Two of Hadoop 3.5's idle loops, costly under TCG (measured with top -H in the guest with the
# cluster idle: the daemons took 45% of a vCPU): the CapacityScheduler's asynchronous
# scheduling thread every 5 ms (11% of a vCPU) and the NameNode's MarkedDeleteBlockScrubber
# every 10 ms (3.4%). Here every 100 and 200 ms: a container allocation or a block deletion
# waits at most that long.
lane_conf "${conf}/modes/vm-lane/yarn-site.xml" \
  yarn.nodemanager.resource.memory-mb 2048 \
  yarn.nodemanager.resource.cpu-vcores 4 \
  yarn.scheduler.minimum-allocation-mb 256 \
  yarn.resourcemanager.nodemanagers.heartbeat-interval-ms 500 \
  yarn.scheduler.capacity.schedule-asynchronously.scheduling-interval-ms 100
lane_conf "${conf}/modes/vm-lane/mapred-site.xml" \
  mapreduce.hpc.shuffle.reducer.fails.without.hpc true \
  mapreduce.map.memory.mb 512 \
  mapreduce.reduce.memory.mb 512 \
  yarn.app.mapreduce.am.resource.mb 512 \
  mapreduce.map.java.opts "-Xmx256m ${jvm}" \
  mapreduce.reduce.java.opts "-Xmx256m ${jvm}" \
  yarn.app.mapreduce.am.command-opts "-Xmx320m ${jvm}" \
  mapreduce.task.io.sort.mb 32 \
  mapreduce.map.speculative false \
  mapreduce.reduce.speculative false
"${H}/sbin/hpc-cluster.sh" apply-mode --mode rdma-shuffle,vm-lane --conf-dir "${conf}" ||
  give_up "hpc-cluster.sh apply-mode --mode rdma-shuffle,vm-lane"
cat >>"${conf}/hadoop-env.sh" <<EOF
# the VM lane (dev-support/vm/guest-job.sh)
export HADOOP_HEAPSIZE_MAX=256m
export HADOOP_OPTS="${jvm}"
export HADOOP_HPC_START_SECONDARY=false
# start-dfs.sh and start-yarn.sh wait for HDFS and YARN to be ready: 180 s by default, and
# YARN's three daemons took 110-129 s here under TCG (their web apps): room for a slower host.
export HADOOP_HPC_START_TIMEOUT=600
# A fresh VM has nothing on the daemons' ports; each check is a JVM (seconds under TCG).
export HADOOP_HPC_PORT_CHECK=false
EOF

step "checknative and format"
# Two JVMs of their own, side by side on the two vCPUs, each bounded as a client command.
timeout "${job_timeout}" "${H}/bin/hadoop" checknative >"${work}/checknative.log" 2>&1 &
checknative_pid=$!
timeout "${job_timeout}" "${H}/bin/hdfs" namenode -format -nonInteractive >"${work}/format.log" 2>&1 ||
  give_up "hdfs namenode -format" "$(tail -n 20 "${work}/format.log")"
wait "${checknative_pid}"
line=$(grep '^rdma:' "${work}/checknative.log")
[[ "${line}" =~ ^rdma:\ +true ]] && pass "bin/hadoop checknative: ${line}" ||
  fail "bin/hadoop checknative finds an RDMA device" "${line}"
step "start HDFS (sbin/start-dfs.sh)"
"${H}/sbin/start-dfs.sh" >"${work}/start-dfs.log" 2>&1 ||
  give_up "sbin/start-dfs.sh" "$(tail -n 30 "${work}/start-dfs.log")"
pass "start-dfs.sh: HDFS ready"
# The whole job's kind: terasort (CI: also YARN and the hpc shuffle) or hdfs; each sets bytes
# (what it wrote) and client_log (the log of its first HDFS client) for the checks below.
case "${job_kind}" in
  terasort)
    # shellcheck source=guest-job-terasort.sh
    . "${here}/guest-job-terasort.sh"
    ;;
  *)
    # shellcheck source=guest-job-hdfs.sh
    . "${here}/guest-job-hdfs.sh"
    ;;
esac
dn_log=$(echo "${H}"/logs/hadoop-*-datanode-*.log)
line=$(grep -m 1 'HDFS DataTransfer: verbs transport listening' "${dn_log}")
[[ -n "${line}" ]] && pass "DataNode log: ${line#*INFO }" ||
  fail "DataNode log says 'HDFS DataTransfer: verbs transport listening'" \
    "$(grep -i 'DataTransfer' "${dn_log}" | tail -n 5)"
# A helper JVM the scripts had to run twice (hpc_conf_load): said, not hidden.
grep -h -A 20 'failed once' "${work}"/start-*.log | sed 's/^/    note: /'

step "the DataNode's and the clients' transfer counters"
# What the DataNode must have moved over verbs: terasort writes the input and the output and
# reads both (the maps, then the read back); hdfs writes the file once and reads it twice
# (fs -cat, and WebHDFS, whose DataNode-side client is on the transport too: 10083802 bytes out
# for 2 x 5000000 read, measured once).
need_out=$((2 * bytes))
if [[ "${job_kind}" == "terasort" ]]; then
  need_in=$((2 * bytes))
else
  need_in=${bytes}
fi
# The DataNode's own count of the transport (HpcDataTransfer-9866: a metrics snapshot at most
# one period old, so waited for), then stock's DataNodeActivity, which counts TCP and transport
# streams alike.
for _ in $(seq 30); do
  bean=$(http_get 9864 '/jmx?qry=Hadoop:service=DataNode,name=HpcDataTransfer-9866')
  [[ "$(jmx_number "${bean}" TransportBytesIn)" -ge "${need_in}" ]] 2>/dev/null && break
  sleep 1
done
t_in=$(jmx_number "${bean}" TransportBytesIn)
t_out=$(jmx_number "${bean}" TransportBytesOut)
t_conns=$(jmx_number "${bean}" ServerConnectionsOverTransport)
t_fallbacks=$(jmx_number "${bean}" Fallbacks)
echo "    HpcDataTransfer-9866: TransportBytesIn=${t_in:-?} TransportBytesOut=${t_out:-?}" \
  "ServerConnectionsOverTransport=${t_conns:-?} Fallbacks=${t_fallbacks:-?}"
grep -qE '"tag.Transport" *: *"verbs"' <<<"${bean}" && [[ "${t_in:-0}" -ge "${need_in}" &&
  "${t_out:-0}" -ge "${need_out}" && "${t_conns:-0}" -gt 0 && "${t_fallbacks:--1}" -eq 0 ]] &&
  pass "DataNode bean HpcDataTransfer-9866: verbs, ${t_in} bytes in (>= ${need_in}), ${t_out} out (>= ${need_out}), no fallback" ||
  fail "DataNode bean HpcDataTransfer-9866: verbs, bytes in >= ${need_in}, out >= ${need_out}, no fallback" \
    "${bean}"
activity=$(http_get 9864 '/jmx?qry=Hadoop:service=DataNode,name=DataNodeActivity-*')
dn_written=$(jmx_number "${activity}" BytesWritten)
dn_read=$(jmx_number "${activity}" BytesRead)
echo "    DataNodeActivity: BytesWritten=${dn_written:-?} BytesRead=${dn_read:-?}"
result job_datanode_bytes_written "${dn_written:-0}"
result job_datanode_bytes_read "${dn_read:-0}"
[[ "${dn_written:-0}" -ge "${need_in}" && "${dn_read:-0}" -ge $((2 * bytes)) ]] &&
  pass "DataNode wrote ${dn_written} (>= ${need_in}) and read ${dn_read} bytes (>= $((2 * bytes)))" ||
  fail "DataNode BytesWritten '${dn_written}' >= ${need_in}, BytesRead '${dn_read}' >= $((2 * bytes))"
logs=""
if [[ "${job_kind}" == "terasort" ]]; then
  # Every task JVM and ApplicationMaster touches HDFS: each must have said it uses verbs.
  logs=$(find "${H}/logs/userlogs" -name syslog 2>/dev/null | sort)
  n_logs=$(grep -c . <<<"${logs}")
  said='HDFS DataTransfer from this process: over the verbs transport'
  n_verbs=$(xargs -r grep -l "${said}" <<<"${logs}" | grep -c .)
  [[ "${n_logs}" -gt 0 && "${n_verbs}" -eq "${n_logs}" ]] &&
    pass "HDFS clients of all ${n_logs} containers over the verbs transport (strict)" ||
    fail "HDFS clients of ${n_verbs} of ${n_logs} containers over the verbs transport" \
      "$(xargs -r grep -h 'HDFS DataTransfer from this process' <<<"${logs}" | sort | uniq -c)"
fi
# Strict clients fail a stream instead of falling back: the jobs may still succeed (a task is
# retried, a history copy given up), so every refusal in any log is a failure here.
mapfile -t client_logs < <(printf '%s\n' "${work}"/{tera,put,cat}*.log "${logs}" | grep -v '^$')
refusals=$(grep -h 'cannot use the transport' "${client_logs[@]}" 2>/dev/null)
[[ -z "${refusals}" ]] && pass "no HDFS transfer stream refused the transport (clients' logs)" ||
  fail "$(grep -c 'cannot use the transport' <<<"${refusals}") HDFS transfer streams could not use the transport (strict)" \
    "$(head -n 10 <<<"${refusals}")"
# A HELLO lost over rxe0 (open: the DataNode never sees it) is tried once more on a new
# connection; counted here, not a failure.
retries=$(grep -h 'trying once more on a new connection' "${client_logs[@]}" 2>/dev/null |
  grep -c .)
result job_hello_retries "${retries}"
say "HDFS transfer HELLOs retried on a new connection: ${retries}"
grep -q 'HDFS DataTransfer from this process: over the verbs transport' "${client_log}" &&
  pass "the first client's HDFS DataTransfer over the verbs transport (${client_log##*/})" ||
  fail "the first client's HDFS DataTransfer over the verbs transport (${client_log##*/})" \
    "$(grep 'HDFS DataTransfer' "${client_log}")"
if [[ "${job_kind}" == "terasort" ]]; then
  line=$(grep -m 1 'hpc shuffle serving map outputs on .* over verbs' "${nm_log}")
  [[ -n "${line}" ]] && pass "NodeManager log: ${line#*INFO }" ||
    fail "NodeManager log says 'hpc shuffle serving map outputs on ... over verbs'" \
      "$(grep 'hpc shuffle' "${nm_log}" | tail -n 5)"
fi
result job_sent_pkts "$(hw sent_pkts)"
result job_rcvd_pkts "$(hw rcvd_pkts)"

# No stop: the VM is powered off next and its disk thrown away; dev-support/test/e2e-tarball.sh
# tests sbin/stop-all.sh (each stop is more JVMs, and the NodeManager's waits ~10 s).
finish
[[ ${failed} -eq 0 ]]
