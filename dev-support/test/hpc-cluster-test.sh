#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Tests of sbin/hpc-cluster.sh without Java, daemons or other hosts: configure from a host file,
# a Slurm node list (stub scontrol) and a PBS node file; the XML it writes; the mode overlays;
# start/status/stop over a stub ssh that runs each "host" here (or fails for chosen hosts), with
# a stand-in java whose "daemons" are sleeping shells carrying the daemon marker.
set -u

here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
src="${here}/../../hadoop-dist/src/main"
# shellcheck source=../../hadoop-dist/src/main/libexec/hpc-functions.sh
. "${src}/libexec/hpc-functions.sh"

# shellcheck source=lib/assert.sh
. "${here}/lib/assert.sh"
tmp=$(mktemp -d)
cleanup() {
  # every stand-in daemon carries its pid dir (under ${tmp}) in its marker
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    if tr '\0' '\n' 2>/dev/null <"${f}" | grep -q -- "-Dhadoop.hpc.daemon=.*@${tmp}/"; then
      pid=${f#/proc/}
      kill "${pid%/cmdline}" 2>/dev/null
    fi
  done
  rm -rf "${tmp}"
}
trap cleanup EXIT

## words TEXT: TEXT's words on one line.
words() {
  local w
  read -r -d '' -a w <<<"$1"
  echo "${w[*]}"
}

## value FILE NAME: a property's value as written in FILE (python-free XML reading).
value() {
  awk -v want="$2" '
    /<name>/ { n = $0; sub(/.*<name>[ \t]*/, "", n); sub(/[ \t]*<\/name>.*/, "", n) }
    /<value>/ && n == want { v = $0; sub(/.*<value>/, "", v); sub(/<\/value>.*/, "", v); print v }
    /<\/property>/ { n = "" }
  ' "$1"
}

## values DIR: every "name=value" of DIR's *-site.xml files.
values() {
  awk '
    /<name>/ { n = $0; sub(/.*<name>[ \t]*/, "", n); sub(/[ \t]*<\/name>.*/, "", n) }
    /<value>/ { v = $0; sub(/.*<value>/, "", v); sub(/<\/value>.*/, "", v); print n "=" v }
  ' "$1"/*-site.xml
}

# A tarball-shaped HADOOP_HOME from the sources; stubs first on PATH.
home="${tmp}/home"
mkdir -p "${home}/etc" "${tmp}/stubs" "${tmp}/java/bin"
cp -r "${src}/bin" "${src}/sbin" "${src}/libexec" "${home}/"
cp -r "${src}/conf" "${home}/etc/hadoop"
export HADOOP_HOME="${home}"
export PATH="${tmp}/stubs:${PATH}"
unset SLURM_JOB_NODELIST SLURM_JOB_ID PBS_NODEFILE PBS_JOBID HADOOP_CONF_DIR HADOOP_HPC_NODE \
  HADOOP_HPC_NODE_HOST HADOOP_LOG_DIR HADOOP_PID_DIR
cluster="${home}/sbin/hpc-cluster.sh"

cat >"${tmp}/stubs/scontrol" <<'EOF'
#!/usr/bin/env bash
# stub: scontrol show hostnames 'cn[01-03]'
[[ "$1 $2" == "show hostnames" && "$3" == "cn[01-03]" ]] || exit 1
printf 'cn01\ncn02\ncn03\n'
EOF
cat >"${tmp}/stubs/ip" <<'EOF'
#!/usr/bin/env bash
# stub: ip -4 -o addr show dev ib0 (10.9.0.<n> for host cn<n>, from HADOOP_HPC_NODE)
[[ "$*" == "-4 -o addr show dev ib0" ]] || exit 1
n=${HADOOP_HPC_NODE##*[!0-9]}
echo "4: ib0    inet 10.9.0.$((10#${n:-1}))/16 brd 10.9.255.255 scope global ib0\       valid_lft forever"
EOF
# ssh stub: runs the command here, or fails like ssh for the hosts in SSH_DOWN; counts how many
# sessions run at once (the highest in ${tmp}/ssh.max).
cat >"${tmp}/stubs/ssh" <<'EOF'
#!/usr/bin/env bash
while [[ $# -gt 0 ]]; do
  case "$1" in
    -o) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
host=$1
shift
[[ "${1:-}" == "--" ]] && shift
count() {
  exec 8>>"${SSH_STATE}/lock"
  flock 8
  local n
  n=$(( $(cat "${SSH_STATE}/now" 2>/dev/null || echo 0) + $1 ))
  echo "${n}" >"${SSH_STATE}/now"
  (( n > $(cat "${SSH_STATE}/max" 2>/dev/null || echo 0) )) && echo "${n}" >"${SSH_STATE}/max"
  exec 8>&-
}
echo "${host}" >>"${SSH_STATE}/hosts"
count 1
sleep 0.3
if [[ " ${SSH_DOWN:-} " == *" ${host} "* ]]; then
  echo "ssh: connect to host ${host} port 22: No route to host" >&2
  rc=255
else
  bash -c "$*"
  rc=$?
fi
count -1
exit "${rc}"
EOF
# java stand-in: a daemon sleeps (carrying its -D marker) until TERM; "namenode -format"
# succeeds; the DataNode of FAKE_FAIL_NODE dies at once with an error in its .out file;
# checknative reports an RDMA device on hw1 only and fails on FAKE_NATIVE_FAIL_NODE.
cat >"${tmp}/java/bin/java" <<'EOF'
#!/usr/bin/env bash
for a in "$@"; do
  [[ "${a}" == "-format" ]] && { echo "formatted"; exit 0; }
  if [[ "${a}" == org.hadoophpc.nativeio.CheckNative ]]; then
    [[ "${HADOOP_HPC_NODE:-}" == "${FAKE_NATIVE_FAIL_NODE:-none}" ]] &&
      { echo "Error: could not find or load main class"; exit 1; }
    echo "hadoop-hpc native library checking:"
    echo "hpcnative:    true  /opt/lib/native/libhpcnative.so (version 0.1.0, abi 5)"
    if [[ "${HADOOP_HPC_NODE:-}" == hw1 ]]; then
      echo "rdma:         true  1 device(s)"
      echo "              mlx5_0 port 1 ACTIVE InfiniBand fw 20.1"
      echo "              mlx5_0 port 2 DOWN InfiniBand fw 20.1"
    else
      echo "rdma:         false no RDMA devices found: /sys/class/infiniband is empty or missing; load an HCA driver"
    fi
    echo "liblustreapi: false liblustreapi not found (dlopen liblustreapi.so.1: no such file): Lustre layout features use plain POSIX behaviour"
    exit 0
  fi
done
if [[ "$*" == *-Dproc_datanode* && "${HADOOP_HPC_NODE:-}" == "${FAKE_FAIL_NODE:-none}" ]]; then
  echo "java.io.IOException: fake disk failure on ${HADOOP_HPC_NODE}"
  exit 1
fi
trap 'exit 0' TERM
while true; do sleep 0.2; done
EOF
chmod +x "${tmp}/stubs/"* "${tmp}/java/bin/java"
export JAVA_HOME="${tmp}/java" HADOOP_HPC_PORT_CHECK=false SSH_STATE="${tmp}/ssh"
mkdir -p "${SSH_STATE}"

echo "== hpc_host_list"
printf '# job hosts\nhn1\nhn2  # second\n\nhn1\nhn3 slots=4\nhn2\n' >"${tmp}/hosts"
hpc_host_list "${tmp}/hosts"
assert_eq "host file: comments, blanks, duplicates dropped, order kept" "hn1 hn2 hn3" "$(words "${HPC_HOSTS}")"
SLURM_JOB_NODELIST='cn[01-03]' hpc_host_list ""
assert_eq "Slurm node list expanded by scontrol" "cn01 cn02 cn03" "$(words "${HPC_HOSTS}")"
printf 'pn2\npn2\npn1\npn1\npn3\n' >"${tmp}/pbs_nodefile"
PBS_NODEFILE="${tmp}/pbs_nodefile" hpc_host_list ""
assert_eq "PBS node file: one line per core, first appearance kept" "pn2 pn1 pn3" "$(words "${HPC_HOSTS}")"
out=$(hpc_host_list "" 2>&1)
assert_contains "no host list is explained" "no host list: pass --hosts FILE" "${out}"
# shellcheck disable=SC2016  # ${IFS} is meant literally: the planted entry
printf 'hn1\n-oProxyCommand=touch${IFS}%s/pwned\n' "${tmp}" >"${tmp}/evil-hosts"
out=$(hpc_host_list "${tmp}/evil-hosts" 2>&1) && rc=0 || rc=$?
assert_eq "a host name starting with '-' is refused" 1 "${rc}"
assert_contains "the refused entry is named" "holds '-oProxyCommand" "${out}"
out=$(hpc_on_host "-oProxyCommand=touch ${tmp}/pwned" true 2>&1) && rc=0 || rc=$?
assert_eq "hpc_on_host refuses an option as a host" 255 "${rc}"
assert_eq "no command ran through ssh's options" "no" "$([[ -e "${tmp}/pwned" ]] && echo yes || echo no)"

echo "== hpc_min_workers"
assert_eq "90% of 3 rounds up" 3 "$(hpc_min_workers 90% 3)"
assert_eq "50% of 5 rounds up" 3 "$(hpc_min_workers 50% 5)"
assert_eq "a number" 2 "$(hpc_min_workers 2 3)"
out=$(hpc_min_workers 4 3 2>&1)
assert_contains "more than there are" "only 3" "${out}"
out=$(hpc_min_workers half 3 2>&1)
assert_contains "malformed" "give a number of workers" "${out}"

echo "== hpc_conf_merge"
cat >"${tmp}/base.xml" <<'EOF'
<?xml version="1.0"?>
<configuration>
  <property>
    <!-- base comment -->
    <name>a</name>
    <value>1</value>
  </property>
  <property><name>b</name><value>2</value></property>
  <property><name>dfs.datanode.plugins</name><value>org.example.Mine, org.example.Shared</value></property>
</configuration>
EOF
cat >"${tmp}/over.xml" <<'EOF'
<configuration>
  <property>
    <!-- overlay comment -->
    <name>a</name>
    <value>10</value>
  </property>
  <property>
    <name>c</name>
    <value>3</value>
  </property>
  <property>
    <name>dfs.datanode.plugins</name>
    <value>org.example.Shared,org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin</value>
  </property>
</configuration>
EOF
hpc_conf_merge "${tmp}/base.xml" "${tmp}/over.xml" >"${tmp}/merged.xml"
assert_eq "overlay replaces a property in place" 10 "$(value "${tmp}/merged.xml" a)"
assert_eq "base properties stay" 2 "$(value "${tmp}/merged.xml" b)"
assert_eq "new properties are added" 3 "$(value "${tmp}/merged.xml" c)"
assert_eq "each property once" "a b dfs.datanode.plugins c" "$(grep -o '<name>[^<]*' "${tmp}/merged.xml" | cut -c7- | tr '\n' ' ' | sed 's/ $//')"
assert_eq "plugin lists are joined, each class once" \
  "org.example.Mine,org.example.Shared,org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin" \
  "$(value "${tmp}/merged.xml" dfs.datanode.plugins)"
assert_contains "the overlay's comment goes with its property" "overlay comment" "$(cat "${tmp}/merged.xml")"
assert_eq "still ends the configuration" "</configuration>" "$(tail -n 1 "${tmp}/merged.xml")"

echo "== mode overlays carry no addresses"
addr_keys='fs.defaultFS=hdfs|rpc-address|http-address|http.address|ipc.address|datanode.address|resourcemanager.hostname|nodemanager.hostname|jobhistory.*address|hadoop.tmp.dir'
for f in "${src}"/conf/modes/*/*.xml; do
  m=${f#"${src}/conf/modes/"}
  assert_eq "${m}: no address or shared state dir" "" \
    "$(values "$(dirname "${f}")" | grep -E "^(${addr_keys})|127\.0\.0\.1")"
done

echo "== configure from a host file (mode hhh-m + rdma-shuffle, IB suffix)"
conf="${tmp}/job/conf"
out=$("${cluster}" configure --hosts "${tmp}/hosts" --conf-dir "${conf}" --mode hhh-m,rdma-shuffle \
  --ib-suffix -ib --local-dir /scratch/local 2>&1)
assert_eq "configure succeeds" 0 "$?"
assert_contains "names the master" "master     hn1 (daemons on hn1-ib)" "${out}"
assert_contains "names the workers" "workers    2: hn2 hn3" "${out}"
assert_eq "workers file: every host but the master" "hn2 hn3" "$(words "$(cat "${conf}/workers")")"
all=$(values "${conf}")
assert_eq "no 127.0.0.1 left in any value" "" "$(grep 127.0.0.1 <<<"${all}")"
assert_eq "fs.defaultFS on the master's IB name" "hdfs://hn1-ib:9000" "$(value "${conf}/core-site.xml" fs.defaultFS)"
assert_eq "NameNode rpc" "hn1-ib:9000" "$(value "${conf}/hdfs-site.xml" dfs.namenode.rpc-address)"
assert_eq "NameNode web" "hn1-ib:9870" "$(value "${conf}/hdfs-site.xml" dfs.namenode.http-address)"
assert_eq "Secondary NameNode" "hn1-ib:9868" "$(value "${conf}/hdfs-site.xml" dfs.namenode.secondary.http-address)"
# shellcheck disable=SC2016
nh='${env.HADOOP_HPC_NODE_HOST}'
assert_eq "DataNode data address: the node's own name" "${nh}:9866" "$(value "${conf}/hdfs-site.xml" dfs.datanode.address)"
assert_eq "DataNode http" "${nh}:9864" "$(value "${conf}/hdfs-site.xml" dfs.datanode.http.address)"
assert_eq "DataNode ipc" "${nh}:9867" "$(value "${conf}/hdfs-site.xml" dfs.datanode.ipc.address)"
assert_eq "DataNode registers its name" "${nh}" "$(value "${conf}/hdfs-site.xml" dfs.datanode.hostname)"
assert_eq "clients use the DataNodes' names" true "$(value "${conf}/hdfs-site.xml" dfs.client.use.datanode.hostname)"
assert_eq "ResourceManager" "hn1-ib" "$(value "${conf}/yarn-site.xml" yarn.resourcemanager.hostname)"
assert_eq "NodeManager registers its name" "${nh}" "$(value "${conf}/yarn-site.xml" yarn.nodemanager.hostname)"
assert_eq "hpc shuffle binds the node's name" "${nh}" "$(value "${conf}/yarn-site.xml" mapreduce.hpc.shuffle.bind-host)"
assert_eq "JobHistory" "hn1-ib:10020" "$(value "${conf}/mapred-site.xml" mapreduce.jobhistory.address)"
assert_eq "JobHistory web" "hn1-ib:19888" "$(value "${conf}/mapred-site.xml" mapreduce.jobhistory.webapp.address)"
# shellcheck disable=SC2016
assert_eq "state on the node-local dir, per host" '/scratch/local/${env.HADOOP_HPC_NODE}' \
  "$(value "${conf}/core-site.xml" hadoop.tmp.dir)"
assert_contains "never under the shared install" 'hadoop.home.dir}/data' "${all}" absent
assert_eq "replication: min(3, workers)" 2 "$(value "${conf}/hdfs-site.xml" dfs.replication)"
assert_eq "mode hhh-m merged" hhh-m "$(value "${conf}/hdfs-site.xml" dfs.hpc.hhh.mode)"
# shellcheck disable=SC2016
assert_contains "hhh-m's RAM disk is per node" '${env.HADOOP_HPC_NODE}/dfs/ram' \
  "$(value "${conf}/hdfs-site.xml" dfs.datanode.data.dir)"
assert_eq "hhh-m: DataNodes run the DataTransfer plugin" \
  org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin "$(value "${conf}/hdfs-site.xml" dfs.datanode.plugins)"
assert_eq "hhh-m: clients use the transfer socket factory" \
  org.hadoophpc.hdfs.transfer.RdmaSocketFactory \
  "$(value "${conf}/hdfs-site.xml" hadoop.rpc.socket.factory.class.ClientProtocol)"
assert_eq "hhh-m: transport endpoint = transfer port + 10000" 10000 \
  "$(value "${conf}/hdfs-site.xml" dfs.hpc.datatransfer.port.offset)"
assert_eq "hhh-m: the auto rule decides (no enabled key written)" "" \
  "$(value "${conf}/hdfs-site.xml" dfs.hpc.datatransfer.enabled)"
assert_eq "mode rdma-shuffle merged" org.hadoophpc.mapreduce.shuffle.HpcShuffleConsumer \
  "$(value "${conf}/mapred-site.xml" mapreduce.job.reduce.shuffle.consumer.plugin.class)"
assert_eq "every property once" "" "$(cut -d= -f1 <<<"${all}" | sort | uniq -d)"
assert_eq "etc/hadoop's other settings kept" org.hadoophpc.yarn.shuffle.HpcShuffleHandler \
  "$(value "${conf}/yarn-site.xml" yarn.nodemanager.aux-services.mapreduce_shuffle.class)"
if command -v xmllint >/dev/null 2>&1; then
  xmllint --noout "${conf}"/*.xml
  assert_eq "well-formed XML (xmllint)" 0 "$?"
fi
env_out=$(cd "${tmp}" && HADOOP_HPC_NODE=hn2 bash -c '. "$1/hadoop-env.sh"; hpc_load_env() { :; }
  echo "${HADOOP_PID_DIR} ${HADOOP_LOG_DIR} ${HADOOP_HPC_IB_SUFFIX}"' _ "${conf}")
assert_eq "pid dir node-local and log dir per host" \
  "/scratch/local/hn2/pids ${conf}/logs/hn2 -ib" "${env_out}"
assert_eq "a node's daemons use its IB name" "hn2-ib" \
  "$(HADOOP_HPC_IB_SUFFIX=-ib hpc_node_host hn2)"
out=$("${cluster}" configure --hosts "${tmp}/hosts" --conf-dir "${tmp}/job" 2>&1)
assert_contains "refuses a directory it did not write" "not written by hpc-cluster.sh configure" "${out}"
out=$("${cluster}" configure --hosts "${tmp}/hosts" --conf-dir "${conf}" --mode nosuch 2>&1)
assert_contains "unknown mode named" "--mode nosuch does not exist" "${out}"

echo "== configure from Slurm (stub scontrol) with an IB interface (stub ip), and from PBS"
out=$(SLURM_JOB_NODELIST='cn[01-03]' SLURM_JOB_ID=77 HADOOP_SSH_OPTS="" \
  "${cluster}" configure --conf-dir "${tmp}/slurm" --ib-interface ib0 --mode lustre-no-local-disks 2>&1)
assert_contains "hosts from SLURM_JOB_NODELIST" "3 host(s) from SLURM_JOB_NODELIST=cn[01-03]" "${out}"
assert_eq "Slurm workers" "cn02 cn03" "$(words "$(cat "${tmp}/slurm/workers")")"
assert_eq "master's address on ib0, asked on the master" "10.9.0.1:9000" \
  "$(value "${tmp}/slurm/hdfs-site.xml" dfs.namenode.rpc-address)"
assert_eq "IB addresses need no reverse name" false \
  "$(value "${tmp}/slurm/hdfs-site.xml" dfs.namenode.datanode.registration.ip-hostname-check)"
assert_eq "lustre mode: no HDFS" "file:///" "$(value "${tmp}/slurm/core-site.xml" fs.defaultFS)"
assert_contains "the job id keeps two jobs' state apart" "hadoop-hpc-${USER:-$(id -un)}-77" \
  "$(value "${tmp}/slurm/core-site.xml" hadoop.tmp.dir)"
assert_eq "a worker's address on ib0" "10.9.0.2" \
  "$(HADOOP_HPC_NODE=cn02 HADOOP_HPC_IB_INTERFACE=ib0 hpc_node_host cn02)"
out=$(PBS_NODEFILE="${tmp}/pbs_nodefile" "${cluster}" configure --conf-dir "${tmp}/pbs" \
  --master pn1 --min-workers 1 2>&1)
assert_contains "hosts from PBS_NODEFILE" "from PBS_NODEFILE" "${out}"
assert_eq "--master chooses the master; the others work" "pn2 pn3" "$(words "$(cat "${tmp}/pbs/workers")")"
assert_eq "PBS master" "hdfs://pn1:9000" "$(value "${tmp}/pbs/core-site.xml" fs.defaultFS)"

echo "== apply-mode (a copy of etc/hadoop, as quickstart and e2e use it)"
cp -r "${home}/etc/hadoop" "${tmp}/single"
"${cluster}" apply-mode --mode hhh-m --conf-dir "${tmp}/single" >/dev/null
assert_eq "mode merged" hhh-m "$(value "${tmp}/single/hdfs-site.xml" dfs.hpc.hhh.mode)"
assert_eq "the one-machine addresses stay" "127.0.0.1:9000" \
  "$(value "${tmp}/single/hdfs-site.xml" dfs.namenode.rpc-address)"
for m in hhh hhh-l; do
  cp -r "${home}/etc/hadoop" "${tmp}/single-${m}"
  "${cluster}" apply-mode --mode "${m}" --conf-dir "${tmp}/single-${m}" >/dev/null
  assert_eq "${m}: DataNodes run the DataTransfer plugin" \
    org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin \
    "$(value "${tmp}/single-${m}/hdfs-site.xml" dfs.datanode.plugins)"
  assert_eq "${m}: NameNode plugin kept" org.hadoophpc.hdfs.hhh.HhhNameNodePlugin \
    "$(value "${tmp}/single-${m}/hdfs-site.xml" dfs.namenode.plugins)"
done

echo "== start with a failing and an unreachable worker (stub ssh, 2 sessions at a time)"
printf 'hm\nhw1\nhw2\nhw3\nhw4\n' >"${tmp}/hosts5"
"${cluster}" configure --hosts "${tmp}/hosts5" --conf-dir "${tmp}/c5" --local-dir "${tmp}/local" \
  --min-workers 2 >/dev/null
export FAKE_FAIL_NODE=hw2 SSH_DOWN=hw3 HADOOP_SSH_PARALLEL=2
out=$(FAKE_NATIVE_FAIL_NODE=hw4 "${cluster}" start --conf-dir "${tmp}/c5" --no-wait 2>&1)
rc=$?
assert_eq "start succeeds with 2 of 4 workers (--min-workers 2)" 0 "${rc}"
assert_contains "checknative of the master on one line" \
  "hm                   native  hpcnative true (version 0.1.0), rdma false (no RDMA devices found: /sys/class/infiniband is empty or missing), liblustreapi false (liblustreapi not found)" "${out}"
assert_contains "checknative names a host's RDMA devices" \
  "hw1                  native  hpcnative true (version 0.1.0), rdma true (1 device(s): mlx5_0), liblustreapi false" "${out}"
assert_contains "checknative on a worker whose DataNode failed" "hw2                  native  hpcnative true" "${out}"
assert_contains "no checknative on an unreachable host" "hw3                  native" "${out}" absent
assert_contains "a failed checknative is reported, not fatal" \
  "hw4                  native  checknative failed (exit 1): Error: could not find or load main class" "${out}"
assert_contains "master reported" "hm                   master  ok      namenode pid" "${out}"
assert_contains "good worker reported" "hw1                  worker  ok      datanode pid" "${out}"
assert_contains "failed worker reported" "hw2                  worker  FAILED" "${out}"
assert_contains "failed worker: the log's tail" "fake disk failure on hw2" "${out}"
assert_contains "failed worker: its other daemon still started" "started: nodemanager pid" "${out}"
assert_contains "unreachable worker reported" "hw3                  worker  UNREACHABLE (ssh exit 255)" "${out}"
assert_contains "one bad worker does not stop the others" "hw4                  worker  ok" "${out}"
assert_contains "summary" "workers started: 2/4 (need 2" "${out}"
assert_contains "names the missing workers" "running without 2 worker(s): hw2 hw3" "${out}"
assert_eq "fan-out bounded by HADOOP_SSH_PARALLEL" 2 "$(cat "${SSH_STATE}/max")"
[[ -f "${tmp}/local/hw1/pids/hadoop-${USER:-$(id -un)}-datanode.pid" ]]
assert_eq "pid files per host on node-local dirs" 0 "$?"
[[ -f "${tmp}/c5/logs/hw2/hadoop-${USER:-$(id -un)}-datanode-$(hostname).out" ]]
assert_eq "logs per host under the log dir" 0 "$?"

echo "== status"
out=$("${cluster}" status --conf-dir "${tmp}/c5" 2>&1)
rc=$?
assert_eq "status: enough live workers is 0" 0 "${rc}"
assert_contains "live worker" "hw4                  worker  ok      datanode pid" "${out}"
assert_contains "partly dead worker" "hw2                  worker  PARTIAL" "${out}"
assert_contains "unreachable worker" "hw3                  worker  UNREACHABLE" "${out}"
assert_contains "summary lists the dead" "live workers: 2/4 (need 2); not live: hw2 hw3" "${out}"
assert_contains "per daemon: the DataNode of hw2 is down, its NodeManager runs (no master answers here)" \
  "workers' daemons: datanode 2/4 running (0 registered), nodemanager 3/4 running (0 registered)" "${out}"
out=$(SSH_DOWN=hw3 "${cluster}" checknative --conf-dir "${tmp}/c5" 2>&1)
assert_eq "checknative alone" 0 "$?"
assert_eq "one line per reachable host" "hm hw1 hw2 hw4" \
  "$(words "$(sed -n 's/^  \([a-z0-9]*\) *native  hpcnative true.*/\1/p' <<<"${out}")")"
HADOOP_HPC_NODE=hw4 "${HADOOP_HOME}/bin/yarn" --config "${tmp}/c5" --daemon stop nodemanager >/dev/null
out=$("${cluster}" status --conf-dir "${tmp}/c5" 2>&1)
assert_eq "below --min-workers is 1" 1 "$?"
assert_contains "the stopped daemon is named" "not running: nodemanager" "${out}"
out=$("${cluster}" start --conf-dir "${tmp}/c5" --no-wait --min-workers 4 2>&1)
assert_eq "start below --min-workers fails" 1 "$?"
assert_contains "and says which hosts failed" "failed: hw2 hw3" "${out}"
assert_contains "running daemons are left as they are" "already running" "${out}"

echo "== clean refuses while daemons run"
unset SSH_DOWN
out=$("${cluster}" clean --conf-dir "${tmp}/c5" 2>&1)
assert_eq "clean with running daemons fails" 1 "$?"
assert_contains "and names the daemon" "hw1                  host    FAILED" "${out}"
assert_contains "keeping its state" "still runs: kept ${tmp}/local/hw1" "${out}"
[[ -d "${tmp}/local/hw1" ]]
assert_eq "a running host's state is kept" 0 "$?"

echo "== stop"
out=$("${cluster}" stop --conf-dir "${tmp}/c5" 2>&1)
assert_eq "stop reaches every host" 0 "$?"
out=$("${cluster}" status --conf-dir "${tmp}/c5" 2>&1)
assert_eq "after stop, nothing runs: 3" 3 "$?"
assert_contains "all dead" "live workers: 0/4" "${out}"

echo "== clean after stop"
out=$("${cluster}" clean --conf-dir "${tmp}/c5" 2>&1)
assert_eq "clean after stop" 0 "$?"
assert_contains "each host's state removed" "hm                   host    ok      removed ${tmp}/local/hm" "${out}"
[[ ! -e "${tmp}/local" ]]
assert_eq "the node-local base is gone once empty" 0 "$?"

echo "== start refuses node-local state it did not make (a planted NameNode image)"
# Another user (or a run of some other tool) made the scratch directory first, with an image.
mkdir -p "${tmp}/planted/hm/dfs/name/current"
chmod 775 "${tmp}/planted"
echo "namespaceID=1" >"${tmp}/planted/hm/dfs/name/current/VERSION"
printf 'hm\n' >"${tmp}/hosts1"
"${cluster}" configure --hosts "${tmp}/hosts1" --conf-dir "${tmp}/c1" --local-dir "${tmp}/planted" \
  --min-workers 1 >/dev/null
out=$("${cluster}" start --conf-dir "${tmp}/c1" --no-wait 2>&1)
assert_eq "start fails" 1 "$?"
assert_contains "the host names the directory, its mode and what to do" \
  "ERROR: ${tmp}/planted has mode 775 but must be 700 (this user's alone): others may have put something in it. Remove it (it is made again, mode 700) or choose another directory" "${out}"
[[ ! -e "${tmp}/planted/hm/pids" ]]
assert_eq "no daemon started on it" 0 "$?"
if [[ "$(id -u)" == 0 ]]; then
  chmod 700 "${tmp}/planted"
  chown -R 65534 "${tmp}/planted"
  out=$("${cluster}" start --conf-dir "${tmp}/c1" --no-wait 2>&1)
  assert_eq "another user's scratch directory: start fails" 1 "$?"
  assert_contains "naming its owner" "ERROR: ${tmp}/planted belongs to" "${out}"
else
  echo "  skip another user's scratch directory (needs root to plant one)"
fi
rm -rf "${tmp}/planted"
out=$("${cluster}" start --conf-dir "${tmp}/c1" --no-wait 2>&1)
assert_eq "made by start itself: fine" 0 "$?"
assert_eq "this user's alone" "700 700" "$(stat -c %a "${tmp}/planted" "${tmp}/planted/hm" | tr "\\n" " " | sed "s/ $//")"
"${cluster}" stop --conf-dir "${tmp}/c1" >/dev/null 2>&1

echo
echo "cluster shell: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
