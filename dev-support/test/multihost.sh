#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Multi-host lane: four "hosts" on this machine, each a network namespace with its
# own address, host name (unshare --uts), sshd and node-local directories; the tarball unpacked
# once in a directory all of them share, as on a cluster's shared file system. A second Unix
# user (the co-tenant, lib/multihost-cotenant.sh) holds the hpc shuffle's first port on every
# worker before the cluster starts and relays it to the service. The cluster is
# configured and started by sbin/hpc-cluster.sh on the master, exactly as a user would, and
# reaches the workers over ssh. Runs TeraGen -> TeraSort (hpc shuffle, strict) -> TeraValidate
# and proves from the job's counters and task hosts that shuffle bytes crossed hosts; TestDFSIO
# writes and reads with replication 3 (fsck: every block on the 3 worker hosts); then kills
# every process of one worker host during the shuffle of a second TeraSort: the job re-runs
# the lost maps and succeeds with the same output, and `hpc-cluster.sh status` and `start`
# name the dead host; the host comes back (`start`), and another is killed in the middle of an
# HDFS write with replication 3: the write succeeds (pipeline recovery) with the source's
# content. `start` prints what checknative found on each host. Then, on the same hosts, a real Slurm (munge, slurmctld on the master, a
# slurmd on every host): sbatch of the shipped example batch script, in which sbin/hpc-slurm.sh
# starts a cluster on the allocation and runs TeraSort + TeraValidate; and, on 2 hosts, the
# launcher on a PBS node file, stopped by SIGTERM (as qdel does) while its command runs, and a
# Slurm job whose launcher gets the time-limit warning (SIGUSR1 to the batch shell).
#
# Usage: multihost.sh TARBALL WORKDIR
# Needs root (namespaces); installs openssh-server, slurm-wlm, munge, iproute2, curl and jq
# with apt-get when missing. Removes every namespace, bridge and process it made on exit, also
# on failure. HPC_MH_ROWS: TeraGen rows (default 400000 = 40 MB: 6 maps of 6.7 MB, 3 reducers);
# HPC_MH_SLURM_ROWS: rows of the Slurm job's TeraSort (default 100000). Small on purpose: the
# lane checks where bytes go and what survives a lost host, on one machine's 2 cores.
set -u

tarball=${1:?usage: multihost.sh TARBALL WORKDIR}
work=${2:?usage: multihost.sh TARBALL WORKDIR}
# Seconds any one job or launcher run may take before the lane calls it hung (a few minutes
# each here).
JOB_TIMEOUT=${HPC_MULTIHOST_JOB_TIMEOUT:-900}
: "${JAVA_HOME:?JAVA_HOME must be set}"
export JAVA_HOME

# The hosts: node0 is the master, node1-3 the workers. Names of namespaces and links carry a
# prefix of their own so the lane never touches anything else on the machine.
PREFIX=hpcmh
BRIDGE=${PREFIX}-br
SUBNET=10.231.0
NODES=(node0 node1 node2 node3)
MASTER=node0
WORKERS=(node1 node2 node3)
ROWS=${HPC_MH_ROWS:-400000}
SLURM_ROWS=${HPC_MH_SLURM_ROWS:-100000}
MUNGE_DIR=/run/${PREFIX}-munge

HPC_LANE_LIB="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/lib"
# shellcheck source=lib/lane.sh
. "${HPC_LANE_LIB}/lane.sh"
# shellcheck source=lib/multihost-launcher.sh
. "${HPC_LANE_LIB}/multihost-launcher.sh"
# shellcheck source=lib/multihost-cotenant.sh
. "${HPC_LANE_LIB}/multihost-cotenant.sh"
t_all=${SECONDS}

## die WHY: the lane cannot run (or cannot go on): a failure, never a skip.
die() {
  echo "ERROR: multihost lane: $*" >&2
  exit 1
}

ns() {
  echo "${PREFIX}-$1"
}

addr() {
  local i
  for i in "${!NODES[@]}"; do
    [[ "${NODES[i]}" == "$1" ]] && echo "${SUBNET}.$((10 + i))"
  done
}

## on NODE COMMAND...: runs COMMAND on NODE: in its network namespace (where /etc/hosts is the
## node's, see /etc/netns) under its own host name.
on() {
  local node=$1 bound=()
  shift
  # on_timeout=SECONDS before the call bounds the command (then killed, exit 124)
  [[ -n "${on_timeout:-}" ]] && bound=(timeout -k 10 "${on_timeout}")
  # shellcheck disable=SC2016  # expanded by the inner bash
  "${bound[@]}" ip netns exec "$(ns "${node}")" unshare --uts -- \
    bash -c 'hostname "$0" && exec "$@"' "${node}" "$@"
}

# ---------------------------------------------------------------------------------------------
# prerequisites, network, sshd

prerequisites() {
  local missing=()
  command -v sshd >/dev/null 2>&1 || [[ -x /usr/sbin/sshd ]] || missing+=(openssh-server)
  command -v ssh >/dev/null 2>&1 || missing+=(openssh-client)
  command -v ssh-keygen >/dev/null 2>&1 || missing+=(openssh-client)
  command -v ip >/dev/null 2>&1 || missing+=(iproute2)
  command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
  command -v curl >/dev/null 2>&1 || missing+=(curl)
  command -v jq >/dev/null 2>&1 || missing+=(jq)
  command -v slurmctld >/dev/null 2>&1 || missing+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || missing+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || missing+=(slurm-client)
  command -v munged >/dev/null 2>&1 || [[ -x /usr/sbin/munged ]] || missing+=(munge)
  [[ "$(id -u)" -eq 0 ]] ||
    die "needs root (network namespaces, unshare --uts, an sshd per host); run dev-support/bin/test as root${missing[*]:+; also missing: ${missing[*]}}"
  if [[ ${#missing[@]} -gt 0 ]]; then
    command -v apt-get >/dev/null 2>&1 || die "missing: ${missing[*]} (and no apt-get to install them)"
    echo "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        die "apt-get install failed for: ${missing[*]}"
  fi
  ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here (network namespaces unavailable)"
}

## Every process of a node's namespace, killed (TERM, then KILL after 3 s).
kill_node() {
  local n pids _
  n=$(ns "$1")
  ip netns list | grep -qw "^${n}" || return 0
  pids=$(ip netns pids "${n}" 2>/dev/null | tr '\n' ' ')
  [[ -n "${pids// /}" ]] || return 0
  # shellcheck disable=SC2086  # a list of pids
  kill ${2:-} ${pids} 2>/dev/null
  [[ -n "${2:-}" ]] && return 0
  for _ in 1 2 3; do
    [[ -z "$(ip netns pids "${n}" 2>/dev/null)" ]] && return 0
    sleep 1
  done
  pids=$(ip netns pids "${n}" 2>/dev/null | tr '\n' ' ')
  # shellcheck disable=SC2086
  [[ -n "${pids// /}" ]] && kill -KILL ${pids} 2>/dev/null
  return 0
}

## Removes the namespaces (their processes first), hosts files and the bridge.
network_down() {
  local node n
  for node in "${NODES[@]}"; do
    kill_node "${node}"
  done
  for node in "${NODES[@]}"; do
    n=$(ns "${node}")
    ip netns del "${n}" 2>/dev/null
    ip link del "v${n}" 2>/dev/null
    rm -rf "/etc/netns/${n}"
  done
  ip link del "${BRIDGE}" 2>/dev/null
  rmdir /etc/netns 2>/dev/null
  rm -rf "${MUNGE_DIR}"
  return 0
}

network_up() {
  local node n a hosts
  network_down # whatever an earlier, killed run left
  ip link add "${BRIDGE}" type bridge && ip link set "${BRIDGE}" up || return 1
  hosts="127.0.0.1 localhost"$'\n'
  for node in "${NODES[@]}"; do
    hosts+="$(addr "${node}") ${node}"$'\n'
  done
  for node in "${NODES[@]}"; do
    n=$(ns "${node}")
    a=$(addr "${node}")
    ip netns add "${n}" &&
      ip link add "v${n}" type veth peer name eth0 netns "${n}" &&
      ip link set "v${n}" master "${BRIDGE}" up &&
      ip -n "${n}" addr add "${a}/24" dev eth0 &&
      ip -n "${n}" link set eth0 up &&
      ip -n "${n}" link set lo up || return 1
    mkdir -p "/etc/netns/${n}" && printf '%s' "${hosts}" >"/etc/netns/${n}/hosts" || return 1
  done
}

## An sshd on NODE (its own config, host key and authorized key under WORK/ssh).
start_sshd() {
  local node=$1 dir="${work}/ssh"
  cat >"${dir}/sshd-${node}.conf" <<EOF
ListenAddress $(addr "${node}")
Port 22
HostKey ${dir}/host_key
AuthorizedKeysFile ${dir}/authorized_keys
PidFile ${dir}/sshd-${node}.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PrintMotd no
EOF
  on "${node}" /usr/sbin/sshd -f "${dir}/sshd-${node}.conf" -E "${dir}/sshd-${node}.log"
}

sshd_up() {
  local dir="${work}/ssh" node
  mkdir -p "${dir}" /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "${dir}/host_key" &&
    ssh-keygen -q -t ed25519 -N '' -f "${dir}/id" &&
    cp "${dir}/id.pub" "${dir}/authorized_keys" || return 1
  for node in "${NODES[@]}"; do
    start_sshd "${node}" || return 1
  done
  # What a user puts in their environment for a cluster's ssh (here: the lane's own key, never
  # ~/.ssh).
  HADOOP_SSH_OPTS="-i ${dir}/id -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no"
  HADOOP_SSH_OPTS+=" -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=5"
  export HADOOP_SSH_OPTS
}

## no_jvm_left WHEN: no Java process in any host's namespace.
no_jvm_left() {
  local left="" node pid
  for node in "${NODES[@]}"; do
    for pid in $(ip netns pids "$(ns "${node}")" 2>/dev/null); do
      tr '\0' ' ' <"/proc/${pid}/cmdline" 2>/dev/null | grep -q 'java' && left+=" ${node}:${pid}"
    done
  done
  [[ -z "${left}" ]] && pass "no JVM left on any host $1" || fail "no JVM left on any host $1:${left}"
}

# ---------------------------------------------------------------------------------------------

cleanup() {
  trap - EXIT INT TERM
  phase ""
  if [[ -n "${H:-}" && -f "${CONF:-/nonexistent}/hadoop-env.sh" ]]; then
    on "${MASTER}" "${H}/sbin/hpc-cluster.sh" stop --conf-dir "${CONF}" >"${work}/final-stop.log" 2>&1
  fi
  network_down
  local left
  left=$(ip netns list | grep "^${PREFIX}-")$(ip link show "${BRIDGE}" 2>/dev/null)
  [[ -z "${left}" ]] || echo "WARNING: left behind: ${left}"
}

prerequisites
rm -rf "${work}"
mkdir -p "${work}" || die "cannot create ${work}"
work=$(cd -P -- "${work}" && pwd -P)
trap cleanup EXIT
trap 'exit 130' INT TERM

phase "network: ${#NODES[@]} namespaces on bridge ${BRIDGE}, an sshd each"
network_up || die "cannot set up the namespaces (see above)"
sshd_up || die "cannot start the sshds (see ${work}/ssh/*.log)"
for node in "${WORKERS[@]}"; do
  # shellcheck disable=SC2086
  out=$(on "${MASTER}" ssh ${HADOOP_SSH_OPTS} "${node}" hostname -s 2>&1)
  [[ "${out}" == "${node}" ]] && pass "ssh ${MASTER} -> ${node}: its host name is ${node}" ||
    fail "ssh ${MASTER} -> ${node}" "${out}"
done
[[ ${failed} -eq 0 ]] || die "the hosts are not reachable over ssh"

phase "install: the tarball unpacked once on the shared directory"
mkdir -p "${work}/shared"
tar xzf "${tarball}" -C "${work}/shared" || die "cannot unpack ${tarball}"
H=$(echo "${work}"/shared/hadoop-hpc-*)
# the tarball's shell functions (hpc_json_number reads a bean's numbers)
# shellcheck source=../../hadoop-dist/src/main/libexec/hpc-functions.sh
. "${H}/libexec/hpc-functions.sh"
# C1-only JVMs for the whole lane, the Slurm and PBS launches included (timing only)
lean_jvms "${H}/etc/hadoop"
printf '%s\n' "${NODES[@]}" >"${work}/hosts"
# The lane's own mode, next to the shipped ones in a copy of etc/hadoop (configure --base):
# short liveness timeouts so a dead host is noticed in seconds, not minutes, and small
# containers for 3 NodeManagers on 2 cores.
cp -r "${H}/etc/hadoop" "${work}/base"
mkdir -p "${work}/base/modes/lane"
# A NodeManager that ran containers took ~17 s to stop: its finished applications stay until
# their log deletion runs (yarn.nodemanager.log.retain-seconds, 3 h), so the stop waits for
# them (250 ms + process-kill-wait 5 s + 1 s) and then 10 s for the log deleter's pool holding
# the delayed deletions (Hadoop 3.5.0 NonAggregatingLogHandler.serviceStop). Deleting at once
# ends both waits; the debug delay keeps the container logs on disk for the lane's diagnostics
# (the DeletionService drops delayed tasks at stop instead of waiting for them).
lane_conf "${work}/base/modes/lane/yarn-site.xml" \
  yarn.nodemanager.log.retain-seconds 0 \
  yarn.nodemanager.delete.debug-delay-sec 3600 \
  yarn.nm.liveness-monitor.expiry-interval-ms 12000 \
  yarn.resourcemanager.nodemanagers.heartbeat-interval-ms 1000 \
  yarn.nodemanager.resource.memory-mb 4096 \
  yarn.nodemanager.resource.cpu-vcores 4 \
  yarn.resourcemanager.am.max-attempts 2 \
  yarn.client.nodemanager-connect.max-wait-ms 10000 \
  yarn.client.nodemanager-connect.retry-interval-ms 1000
# HDFS DataTransfer over the tcp transport, strict (no RDMA between these hosts; the VM lane
# runs verbs): every block write, read and pipeline mirror between hosts goes through the
# plugin's DataNode endpoints (transfer port + 10000), a stream that cannot fails instead of
# using TCP; TestDFSIO and the DataNode killed during a write below run over it.
lane_conf "${work}/base/modes/lane/hdfs-site.xml" \
  dfs.heartbeat.interval 1 \
  dfs.namenode.heartbeat.recheck-interval 5000 \
  dfs.datanode.plugins org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin \
  hadoop.rpc.socket.factory.class.ClientProtocol org.hadoophpc.hdfs.transfer.RdmaSocketFactory \
  dfs.hpc.datatransfer.port.offset 10000 \
  hadoop.hpc.transport tcp \
  dfs.hpc.datatransfer.stream.fails.without.transport true
lane_conf "${work}/base/modes/lane/mapred-site.xml" \
  mapreduce.map.memory.mb 512 \
  mapreduce.reduce.memory.mb 768 \
  yarn.app.mapreduce.am.resource.mb 768 \
  mapreduce.map.speculative false \
  mapreduce.reduce.speculative false \
  mapreduce.job.reduce.slowstart.completedmaps 1.0
CONF="${work}/conf"

phase "co-tenant: another user holds the hpc shuffle's first port on every worker, relaying it"
cotenant_up
cotenant_relays_up

phase "configure and start: hpc-cluster.sh on ${MASTER}"
out=$(on "${MASTER}" "${H}/sbin/hpc-cluster.sh" configure --conf-dir "${CONF}" \
  --hosts "${work}/hosts" --mode rdma-shuffle,lane --base "${work}/base" \
  --local-dir "${work}/local" 2>&1)
rc=$?
printf '%s\n' "${out}" | sed 's/^/    /'
[[ ${rc} -eq 0 ]] && pass "hpc-cluster.sh configure" || die "hpc-cluster.sh configure failed"
out=$(on "${MASTER}" "${H}/sbin/hpc-cluster.sh" start --conf-dir "${CONF}" 2>&1)
rc=$?
printf '%s\n' "${out}" | sed 's/^/    /'
[[ ${rc} -eq 0 ]] && grep -q 'cluster ready: master node0, 3/3 workers' <<<"${out}" &&
  pass "hpc-cluster.sh start: master and 3/3 workers ready" ||
  die "hpc-cluster.sh start failed (logs: ${work}/conf/logs/<host>)"
native=0
for node in "${NODES[@]}"; do
  grep -qE "^  ${node} +native +hpcnative (true|false) .*, rdma (true|false).*, liblustreapi (true|false)" <<<"${out}" &&
    native=$((native + 1))
done
[[ ${native} -eq ${#NODES[@]} ]] && pass "start: a checknative line for each of the ${#NODES[@]} hosts" ||
  fail "start: a checknative line for each host (${native} of ${#NODES[@]})"
out=$(on "${MASTER}" "${H}/sbin/hpc-cluster.sh" status --conf-dir "${CONF}" 2>&1)
rc=$?
[[ ${rc} -eq 0 ]] && grep -q 'live workers: 3/3' <<<"${out}" &&
  pass "hpc-cluster.sh status: 3/3 workers live" || fail "hpc-cluster.sh status: 3/3 workers live" "${out}"
for node in "${WORKERS[@]}"; do
  [[ -d "${work}/local/${node}/dfs/data" ]] &&
    pass "${node} keeps its blocks in its own directory (local/${node})" ||
    fail "${node} keeps its blocks in its own directory (local/${node})"
done

## hadoop ARGS...: the hadoop command on the master with the cluster's configuration.
## hadoop ARGS...: bin/hadoop on the master, bounded: a job that hangs (the defect this lane
## guards against) fails the lane after JOB_TIMEOUT seconds instead of holding it.
hadoop() {
  on_timeout=${JOB_TIMEOUT} on "${MASTER}" "${H}/bin/hadoop" --config "${CONF}" "$@"
}
## hdfs ARGS...: bin/hdfs on the master, bounded like hadoop.
hdfs() {
  on_timeout=${JOB_TIMEOUT} on "${MASTER}" "${H}/bin/hdfs" --config "${CONF}" "$@"
}
## cluster SUBCMD ARGS...: sbin/hpc-cluster.sh SUBCMD on the master for the lane's cluster.
cluster() {
  local sub=$1
  shift
  on_timeout=${JOB_TIMEOUT} on "${MASTER}" "${H}/sbin/hpc-cluster.sh" "${sub}" --conf-dir "${CONF}" "$@"
}
## shown SUBCMD ARGS...: `cluster SUBCMD ARGS`, its output printed indented and kept in OUT,
## its exit code in RC.
shown() {
  OUT=$(cluster "$@" 2>&1)
  RC=$?
  printf '%s\n' "${OUT}" | sed 's/^/    /'
}
## host_of IP: the lane's host name of an address.
host_of() {
  local node
  for node in "${NODES[@]}"; do
    [[ "$(addr "${node}")" == "$1" ]] && echo "${node}"
  done
}
## block_hosts FSCK_OUTPUT: for each block fsck listed, "blk_N Live_repl=R host host ...".
block_hosts() {
  local line ip hosts
  while IFS= read -r line; do
    hosts=""
    while read -r ip; do
      hosts+=" $(host_of "${ip}")"
    done < <(grep -o 'DatanodeInfoWithStorage\[[0-9.]*' <<<"${line}" | sed 's/.*\[//')
    echo "$(grep -o 'blk_[0-9]*' <<<"${line}" | head -n 1) $(grep -o 'Live_repl=[0-9]*' <<<"${line}")${hosts}"
  done < <(grep 'Live_repl=' <<<"$1")
}
## status_names_dead HOST: `hpc-cluster.sh status` exits 1 and names HOST as the dead worker.
status_names_dead() {
  shown status
  [[ ${RC} -eq 1 ]] && grep -qE "^  $1 +worker +UNREACHABLE" <<<"${OUT}" &&
    grep -q "live workers: 2/3 .*not live: $1\$" <<<"${OUT}" &&
    pass "hpc-cluster.sh status names the dead host $1 (exit 1)" ||
    fail "hpc-cluster.sh status names the dead host $1 (exit ${RC})"
}
## rest PATH: GET from the master's JobHistoryServer REST API.
jhs() {
  ip netns exec "$(ns "${MASTER}")" curl -sf --max-time 30 "http://$(addr "${MASTER}"):19888/ws/v1/history/mapreduce$1"
}
## counter LOG NAME: a counter's value as the job client printed it.
counter() {
  sed -n "s/^[[:space:]]*$2=\([0-9]*\)\$/\1/p" "$1" | tail -n 1
}
## task_hosts JOBID TYPE: "task host" of each successful attempt of TYPE (m or r).
task_hosts() {
  local t
  # (a list of one may come as an object)
  for t in $(jhs "/jobs/$1/tasks?type=$2" | jq -r '.tasks.task | arrays[], objects | .id'); do
    jhs "/jobs/$1/tasks/${t}/attempts" |
      jq -r --arg t "${t}" '.taskAttempts.taskAttempt | arrays[], objects | select(.state == "SUCCEEDED") |
        "\($t) \(.nodeHttpAddress | sub(":.*"; ""))"'
  done
}
## teravalidate OUT REPORT: TeraValidate; prints the output's checksum when it found no error.
teravalidate() {
  local log="${work}/teravalidate-${2##*/}.log" report
  hadoop jar "${EX}" teravalidate "$1" "$2" >"${log}" 2>&1 || { grep -m 3 'Error\|failed' "${log}"; return 1; }
  report=$(hadoop fs -cat "$2/part-r-*" 2>&1)
  grep -q '^error' <<<"${report}" && { echo "${report}"; return 1; }
  sed -n 's/^checksum[[:space:]]*//p' <<<"${report}"
}
EX=$(echo "${H}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar)
# TeraSort writes 1 replica unless told: 2, so the output outlives the host killed below
STRICT=(-Dmapreduce.hpc.shuffle.reducer.fails.without.hpc=true -Dmapreduce.job.reduces=3
  -Dmapreduce.terasort.output.replication=2)

phase "teragen ${ROWS} rows ($((ROWS / 10000)) MB, 6 maps, replication 3)"
if hadoop jar "${EX}" teragen -Dmapreduce.job.maps=6 "${ROWS}" /lane/in >"${work}/teragen.log" 2>&1; then
  pass "teragen"
else
  die "teragen failed: $(tail -n 20 "${work}/teragen.log")"
fi

phase "terasort: hpc shuffle (strict), 3 reducers fetching across hosts"
log1="${work}/terasort-1.log"
job1_ok=false
if hadoop jar "${EX}" terasort "${STRICT[@]}" /lane/in /lane/out1 >"${log1}" 2>&1; then
  pass "terasort with the hpc shuffle, strict"
  job1_ok=true
else
  fail "terasort with the hpc shuffle, strict" "$(tail -n 30 "${log1}")"
fi
echo "    counters of the job:"
grep -E 'HPC Shuffle|Bytes fetched over|Reducers that fell back|Reduce shuffle bytes|Launched (map|reduce) tasks' \
  "${log1}" | sed 's/^[[:space:]]*/      /'
tcp=$(counter "${log1}" 'Bytes fetched over tcp')
fallbacks=$(counter "${log1}" 'Reducers that fell back to the stock shuffle')
shuffled=$(counter "${log1}" 'Reduce shuffle bytes')
[[ "${tcp:-0}" -gt 0 && "${fallbacks:-0}" -eq 0 ]] &&
  pass "BYTES_OVER_TCP=${tcp} (of Reduce shuffle bytes=${shuffled:-?}), FALLBACKS=${fallbacks:-0}" ||
  fail "hpc shuffle bytes over tcp > 0, no fallback (tcp '${tcp}', fallbacks '${fallbacks}')"
[[ "${tcp:-0}" -eq "${shuffled:--1}" ]] && pass "every shuffled byte went through the hpc shuffle" ||
  { fail "every shuffled byte went through the hpc shuffle (tcp ${tcp}, shuffle bytes ${shuffled})"; job1_ok=false; }
cotenant_relays_check "${job1_ok}"
job1=$(grep -o 'job_[0-9]*_[0-9]*' "${log1}" | head -n 1)
maps=$(task_hosts "${job1}" m)
reduces=$(task_hosts "${job1}" r)
echo "    where the tasks ran (JobHistoryServer):"
printf '%s\n' "${maps}" "${reduces}" | sed 's/^/      /'
cross=0
while read -r _ rhost; do
  [[ -n "${rhost}" ]] || continue
  # a reducer fetches every map's partition: from each map on another host, across the network
  grep -qv " ${rhost}\$" <<<"${maps}" && cross=$((cross + 1))
done <<<"${reduces}"
map_hosts=$(awk '{ print $2 }' <<<"${maps}" | sort -u | wc -l)
[[ "${map_hosts}" -ge 2 && "${cross}" -eq 3 ]] &&
  pass "maps ran on ${map_hosts} hosts; each of the 3 reducers fetched map outputs from another host" ||
  fail "shuffle across hosts (map hosts ${map_hosts}, reducers fetching remotely ${cross}/3)"

phase "teravalidate"
sum1=$(teravalidate /lane/out1 /lane/report1) && [[ -n "${sum1}" ]] &&
  pass "teravalidate: sorted, checksum ${sum1}" || fail "teravalidate /lane/out1" "${sum1}"
sums1=$(hadoop fs -checksum '/lane/out1/part-r-*' 2>&1 | sed -n 's|^/lane/out1/||p')

phase "testdfsio: write then read 3 files of 8 MB, replication 3"
DFSIO=$(echo "${H}"/share/hadoop/mapreduce/hadoop-mapreduce-client-jobclient-*-tests.jar)
[[ -f "${DFSIO}" ]] || die "the tarball ships no jobclient tests jar (TestDFSIO): ${DFSIO}"
# The class itself, with the jar on HADOOP_CLASSPATH (as dev-support/bench/dfsio runs it): the
# jar's own driver (`hadoop jar <jar> TestDFSIO`) first loads test classes of hadoop-common,
# which the tarball does not ship, and fails.
for op in write read; do
  if on_timeout=${JOB_TIMEOUT} on "${MASTER}" env HADOOP_CLASSPATH="${DFSIO}" "${H}/bin/hadoop" \
      --config "${CONF}" org.apache.hadoop.fs.TestDFSIO -Ddfs.replication=3 -"${op}" -nrFiles 3 \
      -size 8MB -resFile "${work}/dfsio-results.txt" >"${work}/dfsio-${op}.log" 2>&1; then
    pass "TestDFSIO -${op}"
  else
    fail "TestDFSIO -${op}" "$(tail -n 20 "${work}/dfsio-${op}.log")"
  fi
done
echo "    TestDFSIO's results:"
grep -E 'TestDFSIO -----|Number of files|Total MBytes|Throughput|Average IO rate|exec time' \
  "${work}/dfsio-results.txt" 2>/dev/null | sed 's/^[[:space:]]*/      /'
[[ $(grep -cE 'Total MBytes processed: 24(\.0)?$' "${work}/dfsio-results.txt" 2>/dev/null) -eq 2 ]] &&
  pass "TestDFSIO wrote and read 24 MB in 3 files" || fail "TestDFSIO wrote and read 24 MB in 3 files"
fsck=$(hdfs fsck /benchmarks/TestDFSIO/io_data -files -blocks -locations 2>&1)
blocks=$(block_hosts "${fsck}")
echo "    fsck /benchmarks/TestDFSIO/io_data: block, live replicas, their hosts"
printf '%s\n' "${blocks}" | sed 's/^/      /'
spread=$(awk '$2 == "Live_repl=3" && NF == 5 && $3 != $4 && $3 != $5 && $4 != $5' <<<"${blocks}" | wc -l)
[[ "${spread}" -eq 3 && $(grep -c . <<<"${blocks}") -eq 3 ]] && grep -q 'is HEALTHY' <<<"${fsck}" &&
  pass "each of the 3 files' blocks has 3 live replicas on 3 different hosts (fsck HEALTHY)" ||
  fail "3 live replicas on 3 hosts for each TestDFSIO block" "${fsck}"

# Each DataNode served block streams over the transport, the pipelines' mirrors too, none
# over TCP (a bean is a metrics snapshot at most one period, 10 s, old).
mirrors=0
for node in "${WORKERS[@]}"; do
  for _ in $(seq 15); do
    bean=$(ip netns exec "$(ns "${node}")" curl -sf --max-time 30 \
      "http://$(addr "${node}"):9864/jmx?qry=Hadoop:service=DataNode,name=HpcDataTransfer-9866")
    served=$(hpc_json_number ServerConnectionsOverTransport <<<"${bean}")
    [[ "${served:-0}" -gt 0 ]] && break
    sleep 1
  done
  mirrored=$(hpc_json_number MirrorConnectionsOverTransport <<<"${bean}")
  falls=$(hpc_json_number Fallbacks <<<"${bean}")
  over_tcp=$(hpc_json_number MirrorConnectionsOverStockTcp <<<"${bean}")
  mirrors=$((mirrors + ${mirrored:-0}))
  grep -qE '"tag.Transport" *: *"tcp"' <<<"${bean}" && [[ "${served:-0}" -gt 0 &&
    "${falls:-1}" -eq 0 && "${over_tcp:-1}" -eq 0 ]] &&
    pass "${node}'s DataNode: ${served} streams served, ${mirrored:-0} mirrored over the tcp transport, no fallback" ||
    fail "${node}'s DataNode serves over the tcp transport, no fallback" "${bean}"
done
[[ "${mirrors}" -gt 0 ]] && pass "pipelines mirrored between hosts over the transport (${mirrors} streams)" ||
  fail "pipelines mirrored between hosts over the transport"

phase "a worker host killed during the shuffle of a second terasort"
log2="${work}/terasort-2.log"
hadoop jar "${EX}" terasort "${STRICT[@]}" /lane/in /lane/out2 >"${log2}" 2>&1 &
job_pid=$!
## am PATH: GET from the running job's ApplicationMaster REST API (through the RM's proxy).
am() {
  ip netns exec "$(ns "${MASTER}")" curl -sfL --max-time 30 "http://$(addr "${MASTER}"):8088/proxy/${app}/ws/v1/mapreduce$1"
}
victim="" app="" job2=""
for _ in $(seq 400); do
  kill -0 "${job_pid}" 2>/dev/null || break
  app=${app:-$(grep -o 'application_[0-9]*_[0-9]*' "${log2}" | head -n 1)}
  job2=${app/application_/job_}
  # every map finished and the reducers launched: the shuffle starts (reducers report their
  # progress every few seconds, by when the map outputs may be fetched already: do not wait for it)
  if [[ -n "${app}" ]] && am "/jobs/${job2}" |
      jq -e '.job | .mapsCompleted == .mapsTotal and .reducesRunning > 0' >/dev/null 2>&1; then
    am_host=$(ip netns exec "$(ns "${MASTER}")" curl -sf --max-time 30 "http://$(addr "${MASTER}"):8088/ws/v1/cluster/apps/${app}" |
      jq -r '.app.amHostHttpAddress | sub(":.*"; "")')
    # the host of a finished map that is not the ApplicationMaster's
    map_hosts2=$(for t in $(am "/jobs/${job2}/tasks?type=m" | jq -r '.tasks.task | arrays[], objects | .id'); do
      am "/jobs/${job2}/tasks/${t}/attempts" |
        jq -r '.taskAttempts.taskAttempt | arrays[], objects | select(.state == "SUCCEEDED") | .nodeHttpAddress | sub(":.*"; "")'
    done | sort | uniq -c)
    victim=$(awk -v am="${am_host}" '$2 != am { print $2; exit }' <<<"${map_hosts2}")
    break
  fi
  sleep 0.5
done
if [[ -n "${victim}" ]]; then
  echo "    job: $(am "/jobs/${job2}" | jq -c '.job | {mapsCompleted, reducesRunning, reduceProgress}')"
  echo "    finished maps per host: $(tr -s ' \n' ' ' <<<"${map_hosts2}"); ApplicationMaster on ${am_host}"
  echo "    killing every process of ${victim} (namespace $(ns "${victim}"): $(ip netns pids "$(ns "${victim}")" | wc -l) processes: $(
    for p in $(ip netns pids "$(ns "${victim}")"); do ps -o args= -p "${p}" | grep -o 'proc_[a-z]*\|YarnChild\|sshd' | head -n 1; done | sort | uniq -c | tr -s ' \n' ' '))"
  kill_node "${victim}" -KILL
  t_kill=${SECONDS}
  pass "killed host ${victim} after the maps, with the reducers launched for the shuffle"
else
  fail "the second terasort reached its shuffle" "$(tail -n 20 "${log2}")"
fi
wait "${job_pid}"
rc=$?
[[ ${rc} -eq 0 ]] && pass "terasort succeeded without ${victim:-?} ($((SECONDS - ${t_kill:-SECONDS})) s after the kill)" ||
  fail "terasort succeeded without ${victim:-?}" "$(tail -n 40 "${log2}")"
echo "    counters of the job:"
grep -E 'Bytes fetched over|Reducers that fell back|(Launched|Failed|Killed) (map|reduce) tasks' \
  "${log2}" | sed 's/^[[:space:]]*/      /'
grep -E 'TaskAttempt.*(FAILED|KILLED)|Task Id :' "${log2}" | head -n 5 | sed 's/^/      /'
launched=$(counter "${log2}" 'Launched map tasks')
[[ "${launched:-0}" -gt 6 ]] && pass "the lost host's maps were re-run (${launched} map attempts for 6 maps)" ||
  fail "the lost host's maps were re-run (launched maps '${launched}')"
[[ "$(counter "${log2}" 'Reducers that fell back to the stock shuffle')" == "" ||
  "$(counter "${log2}" 'Reducers that fell back to the stock shuffle')" -eq 0 ]] &&
  pass "no reducer fell back to the stock shuffle" || fail "no reducer fell back to the stock shuffle"
sum2=$(teravalidate /lane/out2 /lane/report2) && [[ -n "${sum2}" ]] &&
  pass "teravalidate after the kill: sorted, checksum ${sum2}" || fail "teravalidate /lane/out2" "${sum2}"
[[ -n "${sum1}" && "${sum1}" == "${sum2}" ]] && pass "same output as without the kill (checksum ${sum2})" ||
  fail "same output as without the kill (checksums '${sum1}' and '${sum2:0:20}')"
sums2=$(hadoop fs -checksum '/lane/out2/part-r-*' 2>&1 | sed -n 's|^/lane/out2/||p')
[[ "${sums1}" == "${sums2}" && $(grep -c '^part-r-' <<<"${sums2}") -eq 3 ]] &&
  pass "each part file byte for byte the first run's (hdfs checksums)" ||
  fail "each part file byte for byte the first run's" "${sums1}"$'\n'"${sums2}"
status_names_dead "${victim:-none}"

phase "start with ${victim:-?} dead (--min-workers 2), then with ${victim:-?} back"
shown start --min-workers 2
[[ ${RC} -eq 0 ]] && grep -qE "^  ${victim:-none} +worker +UNREACHABLE" <<<"${OUT}" &&
  grep -q "running without 1 worker(s): ${victim:-none}\$" <<<"${OUT}" && grep -q '^cluster ready' <<<"${OUT}" &&
  pass "start names the dead host ${victim} and goes on with the 2 others" ||
  fail "start names the dead host ${victim} and goes on (exit ${RC})"
[[ -n "${victim}" ]] && start_sshd "${victim}" # the host is back (its state dir kept)
shown start
[[ ${RC} -eq 0 ]] && grep -qE "^  ${victim:-none} +worker +ok +datanode pid [0-9]+, nodemanager pid" <<<"${OUT}" &&
  grep -q 'cluster ready: master node0, 3/3 workers' <<<"${OUT}" &&
  pass "start brings ${victim}'s daemons back: 3/3 workers registered" ||
  fail "start brings ${victim} back (exit ${RC})"

phase "a worker host killed during an HDFS write (64 MB, replication 3, 32 MB blocks)"
# the host killed here: a worker other than the first victim
victim2=$(printf '%s\n' "${WORKERS[@]}" | grep -vx "${victim:-none}" | head -n 1)
src="${work}/put.src"
head -c 64M /dev/urandom >"${src}"
src_sum=$(md5sum <"${src}" | cut -d' ' -f1)
rm -f "${work}/put.half" "${work}/put.go"
# The source fed 1 MB at a time; after 24 MB (in the first block) the feeder waits, for at most
# 30 s, until the host is killed, so the kill lands mid-block whatever the machine's speed.
{
  for i in $(seq 0 63); do
    dd if="${src}" bs=1M skip="${i}" count=1 status=none
    if [[ ${i} -eq 23 ]]; then
      touch "${work}/put.half"
      for _ in $(seq 300); do
        [[ -e "${work}/put.go" ]] && break
        sleep 0.1
      done
    fi
  done
} | hadoop fs -Ddfs.blocksize=32m -Ddfs.replication=3 -put - /lane/put.bin >"${work}/put.log" 2>&1 &
put_pid=$!
rbw=""
for _ in $(seq 300); do
  kill -0 "${put_pid}" 2>/dev/null || break
  if [[ -e "${work}/put.half" ]]; then
    # the replica the victim is receiving, in its DataNode's rbw (replica being written) dir
    rbw=$(find "${work}/local/${victim2}/dfs/data" -path '*/rbw/blk_*' ! -name '*.meta' -size +1M \
      -printf '%f %s bytes\n' 2>/dev/null | head -n 1)
    [[ -n "${rbw}" ]] && break
  fi
  sleep 0.1
done
if [[ -n "${rbw}" ]]; then
  echo "    ${victim2} is receiving a replica: rbw/${rbw}"
  kill_node "${victim2}" -KILL
  pass "killed host ${victim2} with a replica of the file half written"
else
  fail "the write reached ${victim2} (a replica being written)" "$(tail -n 20 "${work}/put.log")"
fi
touch "${work}/put.go"
wait "${put_pid}"
rc=$?
echo "    the client's warnings:"
grep -E 'WARN.*(Error Recovery|is bad|Excluding datanode|Exception in createBlockOutputStream)' "${work}/put.log" |
  head -n 4 | sed -e 's/,DS-[0-9a-f-]*,DISK//g' -e 's/^/      /'
[[ ${rc} -eq 0 ]] && pass "hadoop fs -put succeeded without ${victim2}" ||
  fail "hadoop fs -put succeeded without ${victim2} (exit ${rc})" "$(tail -n 30 "${work}/put.log")"
grep -E 'WARN' "${work}/put.log" | grep -q "$(addr "${victim2}"):" &&
  pass "the client's log names ${victim2}'s DataNode as failed (pipeline recovery)" ||
  fail "the client's log names ${victim2}'s DataNode" "$(grep WARN "${work}/put.log" | head -n 5)"
put_sum=$(hadoop fs -cat /lane/put.bin | md5sum | cut -d' ' -f1)
echo "    md5 of the source ${src_sum}, of /lane/put.bin ${put_sum}"
[[ "${put_sum}" == "${src_sum}" ]] && pass "the file's content equals the source's (md5 ${put_sum})" ||
  fail "the file's content equals the source's (${src_sum} vs ${put_sum})"
fsck=$(hdfs fsck /lane/put.bin -files -blocks -locations 2>&1)
blocks=$(block_hosts "${fsck}")
echo "    fsck /lane/put.bin: block, live replicas, their hosts"
printf '%s\n' "${blocks}" | sed 's/^/      /'
# Each block has live replicas on live hosts only. A block begun after the kill may have fewer
# than 2 replicas for a while (the NameNode can place it before it sees a host that came back):
# under-replication is HDFS's to repair later; missing or corrupt blocks are failures.
grep -q '/lane/put.bin 67108864 bytes' <<<"${fsck}" && grep -q 'is HEALTHY' <<<"${fsck}" &&
  [[ $(grep -c . <<<"${blocks}") -eq 2 ]] && ! grep -qw "${victim2}" <<<"${blocks}" &&
  [[ $(awk 'NF >= 3' <<<"${blocks}" | wc -l) -eq 2 ]] &&
  pass "64 MB in 2 blocks, each with live replicas on live hosts only (fsck HEALTHY)" ||
  fail "64 MB in 2 blocks on the live hosts" "${fsck}"
status_names_dead "${victim2}"

phase "stop: hpc-cluster.sh stop"
shown stop
grep -qE "^  ${victim2:-none} +worker +UNREACHABLE" <<<"${OUT}" &&
  pass "stop names the unreachable host and stops the others" ||
  fail "stop names the unreachable host"
no_jvm_left "after stop"

launcher_checks

phase ""

echo
echo "multihost lane phases:"
printf '  %s\n' "${phases[@]}"
echo "  total $((SECONDS - t_all)) s"
if [[ ${failed} -gt 0 ]]; then
  echo "multihost failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "multihost: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
