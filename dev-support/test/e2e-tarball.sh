#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# End-to-end test of the built tarball, as a user would run it: unpack, check the commands,
# format, start real daemons with sbin/start-all.sh, run TeraGen -> TeraSort -> TeraValidate,
# refuse a second cluster on the same ports, explain a crashed daemon, stop with
# sbin/stop-all.sh and leave no JVM behind.
#
# Usage: e2e-tarball.sh TARBALL WORKDIR
set -u

tarball=${1:?usage: e2e-tarball.sh TARBALL WORKDIR}
work=${2:?usage: e2e-tarball.sh TARBALL WORKDIR}
: "${JAVA_HOME:?JAVA_HOME must be set}"
export JAVA_HOME

# shellcheck source=lib/lane.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/lib/lane.sh"

## check NAME COMMAND...: passes when COMMAND succeeds.
check() {
  local name=$1 out
  shift
  if out=$("$@" 2>&1); then pass "${name}"; else fail "${name}" "${out}"; fi
}

## expect_fail_with NAME TEXT COMMAND...: COMMAND must fail and its output contain TEXT.
expect_fail_with() {
  local name=$1 text=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [[ ${rc} -ne 0 ]] && grep -qF -- "${text}" <<<"${out}"; then
    pass "${name}"
  else
    fail "${name} (exit ${rc}, expected failure mentioning '${text}')" "${out}"
  fi
}

## expect_output NAME TEXT COMMAND...: COMMAND must succeed and print TEXT.
expect_output() {
  local name=$1 text=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [[ ${rc} -eq 0 ]] && grep -qF -- "${text}" <<<"${out}"; then
    pass "${name}"
  else
    fail "${name} (exit ${rc}, expected output '${text}')" "${out}"
  fi
}

## JVMs started from the pid dir of an unpacked tarball (marker set by bin/).
jvms_of() {
  local marker="@$1/pids" f
  for f in /proc/[0-9]*/cmdline; do
    if tr '\0' '\n' 2>/dev/null <"${f}" | grep -q -- "^-Dhadoop.hpc.daemon=.*${marker}\$"; then
      echo "${f#/proc/}" | cut -d/ -f1
    fi
  done
}

## Task JVMs (MRAppMaster, YarnChild) whose container lives under an unpacked tarball.
containers_of() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    if tr '\0' ' ' 2>/dev/null <"${f}" | grep -q -- "$1/data/nm-local-dir.*\(MRAppMaster\|YarnChild\)"; then
      echo "${f#/proc/}" | cut -d/ -f1
    fi
  done
}

rm -rf "${work}"
mkdir -p "${work}/a" "${work}/b"
tar xzf "${tarball}" -C "${work}/a" || { echo "cannot unpack ${tarball}"; exit 1; }
tar xzf "${tarball}" -C "${work}/b" || exit 1
A=$(echo "${work}"/a/hadoop-hpc-*)
B=$(echo "${work}"/b/hadoop-hpc-*)
lean_jvms "${A}/etc/hadoop"
lean_jvms "${B}/etc/hadoop"

stop_everything() {
  "${A}/sbin/stop-all.sh" >/dev/null 2>&1
  "${B}/sbin/stop-all.sh" >/dev/null 2>&1
}
trap stop_everything EXIT

phase "tarball layout and commands"
for d in bin sbin etc/hadoop lib/native share/hadoop/lib share/hadoop-hpc; do
  check "tarball has ${d}/" test -d "${A}/${d}"
done
for f in bin/hadoop bin/hdfs bin/yarn bin/mapred sbin/start-dfs.sh sbin/stop-dfs.sh \
  sbin/start-yarn.sh sbin/stop-yarn.sh sbin/start-all.sh sbin/stop-all.sh sbin/workers.sh \
  sbin/hadoop-daemon.sh sbin/yarn-daemon.sh sbin/mr-jobhistory-daemon.sh \
  sbin/start-balancer.sh sbin/stop-balancer.sh; do
  check "${f} is executable" test -x "${A}/${f}"
done
# Every command the README and the user guide show exists (the docs-commands check), and the
# check itself finds a command, an option and a script that do not.
here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
if out=$(bash "${here}/docs-commands.sh" "${A}" 2>&1); then
  pass "$(tail -n 1 <<<"${out}")"
else
  fail "docs-commands: every documented command exists" "$(grep -e FAIL -e docs-commands <<<"${out}")"
fi
# shellcheck disable=SC2016  # markdown backticks
printf '`sbin/hpc-cluster.sh start --no-such-option`, `hdfs nosuchcommand`, `dev-support/bench/none`\n' \
  >"${work}/bad-doc.md"
out=$(bash "${here}/docs-commands.sh" "${A}" "${work}/bad-doc.md" 2>&1)
grep -q "3 missing" <<<"${out}" && pass "docs-commands finds a missing option, command and script" ||
  fail "docs-commands finds a missing option, command and script" "${out}"
check "examples jar shipped" compgen -G "${A}/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar"
check "TestDFSIO jar shipped" compgen -G "${A}/share/hadoop/mapreduce/hadoop-mapreduce-client-jobclient-*-tests.jar"
expect_output "hadoop version names hadoop-hpc and Hadoop 3.5.0" "Hadoop 3.5.0" "${A}/bin/hadoop" version
expect_output "hadoop version names hadoop-hpc" "hadoop-hpc" "${A}/bin/hadoop" version
expect_output "hdfs getconf reads etc/hadoop" "hdfs://127.0.0.1:9000" \
  "${A}/bin/hdfs" getconf -confKey fs.defaultFS
expect_output "hadoop classpath lists our jars" "share/hadoop-hpc" "${A}/bin/hadoop" classpath
expect_output "hadoop envvars" "HADOOP_CONF_DIR='${A}/etc/hadoop'" "${A}/bin/hadoop" envvars
expect_output "--config selects another configuration directory" "HADOOP_CONF_DIR='${B}/etc/hadoop'" \
  "${A}/bin/hadoop" --config "${B}/etc/hadoop" envvars
if [[ -f "${A}/lib/native/libhpcnative.so" ]]; then
  expect_output "checknative loads libhpcnative" "hpcnative:" "${A}/bin/hadoop" checknative
  out=$("${A}/bin/hadoop" checknative 2>&1)
  if grep -qE '^rdma: +true' <<<"${out}"; then
    pass "checknative lists RDMA devices"
  elif grep -qE '^rdma: +false +.*RDMA' <<<"${out}"; then
    pass "checknative explains why RDMA is unavailable"
    expect_fail_with "checknative -a fails without RDMA" "rdma:" "${A}/bin/hadoop" checknative -a
  else
    fail "checknative explains RDMA availability" "${out}"
  fi
  grep -qE '^hpcnative: +true' <<<"${out}" && pass "checknative: hpcnative true" ||
    fail "checknative: hpcnative true" "${out}"
  # Hadoop's NativeCodeLoader finds our libhadoop.so through bin/'s java.library.path
  grep -qE "^hadoop: +true +/.*/lib/native/libhadoop.so$" <<<"${out}" &&
    pass "checknative: Hadoop loads lib/native/libhadoop.so" ||
    fail "checknative: Hadoop loads lib/native/libhadoop.so" "${out}"
else
  fail "lib/native/libhpcnative.so is in the tarball (was it built with -Dnative.skip=true?)"
fi
expect_fail_with "unknown subcommand is refused" "unknown subcommand 'frobnicate'" \
  "${A}/bin/hdfs" frobnicate
expect_fail_with "missing JAVA_HOME is explained" "JAVA_HOME is not set" \
  env -u JAVA_HOME "${A}/bin/hdfs" dfsadmin -report
expect_fail_with "missing configuration directory is explained" "does not exist" \
  "${A}/bin/hadoop" --config "${work}/nowhere" version

phase "start-up"
expect_fail_with "an unformatted NameNode is explained" "namenode -format" "${A}/sbin/start-dfs.sh"
check "no daemon left after the refused start" test -z "$(jvms_of "${A}")"
check "hdfs namenode -format" "${A}/bin/hdfs" namenode -format -nonInteractive
expect_output "start-all.sh waits for HDFS" "HDFS ready" "${A}/sbin/start-all.sh"
expect_output "datanode registered" "Live datanodes (1)" "${A}/bin/hdfs" dfsadmin -report
expect_output "safe mode is off" "Safe mode is OFF" "${A}/bin/hdfs" dfsadmin -safemode get
expect_output "storage policies available" "HOT" "${A}/bin/hdfs" storagepolicies -listPolicies
expect_output "nodemanager registered" "Total Nodes:1" "${A}/bin/yarn" node -list
for d in namenode datanode secondarynamenode; do
  check "hdfs --daemon status ${d}" "${A}/bin/hdfs" --daemon status "${d}"
done
for d in resourcemanager nodemanager; do
  check "yarn --daemon status ${d}" "${A}/bin/yarn" --daemon status "${d}"
done
check "mapred --daemon status historyserver" "${A}/bin/mapred" --daemon status historyserver
expect_fail_with "starting a running daemon again is refused" "already running" \
  "${A}/bin/hdfs" --daemon start namenode

phase "a second cluster on the same ports"
check "second tarball: format" "${B}/bin/hdfs" namenode -format -nonInteractive
expect_fail_with "second start-dfs.sh names the NameNode port" \
  "namenode cannot start: port 127.0.0.1:9000 (dfs.namenode.rpc-address) is already in use" \
  "${B}/sbin/start-dfs.sh"
expect_fail_with "second start-yarn.sh names the ResourceManager port" \
  "resourcemanager cannot start: port 127.0.0.1:8032 (yarn.resourcemanager.address) is already in use" \
  "${B}/sbin/start-yarn.sh"
check "the refused cluster left no daemon" test -z "$(jvms_of "${B}")"
out=$("${B}/bin/hdfs" --daemon status namenode 2>&1)
rc=$?
[[ ${rc} -eq 3 ]] && pass "status of a never-started daemon is LSB 3" ||
  fail "status of a never-started daemon is LSB 3 (got ${rc})" "${out}"

phase "TeraGen -> TeraSort -> TeraValidate"
ex=$(echo "${A}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar)
rows=${HPC_E2E_ROWS:-200000}
check "teragen ${rows} rows" "${A}/bin/hadoop" jar "${ex}" teragen -Dmapreduce.job.maps=2 \
  "${rows}" /e2e/in
check "terasort, 2 reducers" "${A}/bin/hadoop" jar "${ex}" terasort -Dmapreduce.job.reduces=2 \
  /e2e/in /e2e/out
check "teravalidate" "${A}/bin/hadoop" jar "${ex}" teravalidate /e2e/out /e2e/report
report=$("${A}/bin/hdfs" dfs -cat '/e2e/report/part-r-*' 2>&1)
if grep -q '^checksum' <<<"${report}" && ! grep -q '^error' <<<"${report}"; then
  pass "teravalidate reports sorted output, no errors"
else
  fail "teravalidate reports sorted output, no errors" "${report}"
fi
gen=$("${A}/bin/hdfs" dfs -cat '/e2e/in/part-m-*' | wc -c)
sorted=$("${A}/bin/hdfs" dfs -cat '/e2e/out/part-r-*' | wc -c)
[[ "${gen}" -eq $((rows * 100)) && "${sorted}" -eq "${gen}" ]] &&
  pass "sorted output holds every generated byte (${sorted})" ||
  fail "sorted output holds every generated byte (generated ${gen}, sorted ${sorted})"
phase "the same TeraSort with the hadoop-hpc shuffle (HpcShuffleHandler in the NodeManager)"
hpc_log="${work}/terasort-hpc.log"
if "${A}/bin/hadoop" jar "${ex}" terasort -Dmapreduce.job.reduces=2 \
  -Dmapreduce.job.reduce.shuffle.consumer.plugin.class=org.hadoophpc.mapreduce.shuffle.HpcShuffleConsumer \
  /e2e/in /e2e/out-hpc >"${hpc_log}" 2>&1; then
  pass "terasort with the hpc shuffle"
else
  fail "terasort with the hpc shuffle" "$(tail -n 30 "${hpc_log}")"
fi
fetched=$(sed -n 's/^[[:space:]]*Bytes fetched over tcp=\([0-9]*\)$/\1/p' "${hpc_log}")
[[ "${fetched:-0}" -gt 0 ]] && ! grep -q 'Reducers that fell back' "${hpc_log}" &&
  pass "hpc shuffle fetched ${fetched} bytes over tcp, no fallback" ||
  fail "hpc shuffle fetched bytes over tcp, no fallback" "$(grep -A4 'HPC Shuffle' "${hpc_log}")"
# The user guide's "Is RDMA being used?" commands (on tcp here: no RDMA on this host).
job=$(grep -o 'job_[0-9]*_[0-9]*' "${hpc_log}" | head -n 1)
n=$("${A}/bin/mapred" job -counter "${job}" org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter \
  BYTES_OVER_TCP 2>/dev/null | tail -n 1)
[[ -n "${n}" && "${n}" == "${fetched}" ]] &&
  pass "mapred job -counter ${job} ...HpcShuffleCounter BYTES_OVER_TCP: ${n}" ||
  fail "mapred job -counter ${job} ...HpcShuffleCounter BYTES_OVER_TCP is ${fetched}" "${n}"
# A bean is a metrics snapshot at most one period (10 s) old: wait for the job to show.
for _ in $(seq 30); do
  bean=$(curl -sf "http://127.0.0.1:8042/jmx?qry=Hadoop:service=NodeManager,name=HpcShuffleMetrics")
  served=$(sed -n 's/.*"BytesServedOverTcp" *: *\([0-9]*\).*/\1/p' <<<"${bean}")
  [[ "${served:-0}" -ge "${fetched:-1}" ]] && break
  sleep 1
done
[[ "${served:-0}" -ge "${fetched:-1}" ]] &&
  pass "NodeManager bean HpcShuffleMetrics: BytesServedOverTcp ${served}" ||
  fail "NodeManager bean HpcShuffleMetrics: BytesServedOverTcp >= ${fetched}" "${bean}"
bean=$(curl -sf "http://127.0.0.1:8042/jmx?qry=Hadoop:service=NodeManager,name=HpcTransport-*")
opened=$(sed -n 's/.*"ConnectionsOpened" *: *\([0-9]*\).*/\1/p' <<<"${bean}" | head -n 1)
grep -q '"name" *: *"Hadoop:service=NodeManager,name=HpcTransport-tcp-' <<<"${bean}" &&
  [[ "${opened:-0}" -gt 0 ]] &&
  pass "NodeManager bean HpcTransport-tcp-*: ConnectionsOpened ${opened}" ||
  fail "NodeManager bean HpcTransport-tcp-* with ConnectionsOpened > 0" "${bean}"
# Reducers (YARN containers) on the NodeManager's own host reach its shuffle service by the
# tcp transport's same-host socket: the default directory is the same in every process of the
# user, tasks included (they resolve neither -Dhadoop.home.dir nor the daemons' environment).
local_conns=$(sed -n 's/.*"LocalConnections" *: *\([0-9]*\).*/\1/p' <<<"${bean}" | head -n 1)
[[ "${local_conns:-0}" -gt 0 ]] &&
  pass "NodeManager bean HpcTransport-tcp-*: LocalConnections ${local_conns} (same-host reducers by local socket)" ||
  fail "NodeManager bean HpcTransport-tcp-* with LocalConnections > 0 (same-host reducers by local socket)" "${bean}"
same=true
for part in $("${A}/bin/hdfs" dfs -ls -C '/e2e/out/part-r-*'); do
  a=$("${A}/bin/hdfs" dfs -cat "${part}" | sha256sum)
  b=$("${A}/bin/hdfs" dfs -cat "/e2e/out-hpc/$(basename "${part}")" | sha256sum)
  [[ "${a}" == "${b}" ]] || same=false
done
[[ "${same}" == "true" ]] && pass "hpc shuffle output is byte for byte stock's" ||
  fail "hpc shuffle output is byte for byte stock's"
stock_sum=$("${A}/bin/hdfs" dfs -cat '/e2e/out/part-r-*' | sha256sum)
in_sum=$("${A}/bin/hadoop" jar "${ex}" teravalidate /e2e/in /e2e/report-in 2>/dev/null >/dev/null;
  "${A}/bin/hdfs" dfs -cat '/e2e/report-in/part-r-*' 2>/dev/null | sed -n 's/^checksum[[:space:]]*//p')
out_sum=$(sed -n 's/^checksum[[:space:]]*//p' <<<"${report}")
[[ -n "${in_sum}" && "${in_sum}" == "${out_sum}" ]] &&
  pass "checksum of input equals checksum of sorted output (${out_sum})" ||
  fail "checksum of input equals checksum of sorted output (in '${in_sum}', out '${out_sum}')"

phase "admin commands as in Apache Hadoop 3.5"
expect_output "hadoop jnipath" "${A}/lib/native" "${A}/bin/hadoop" jnipath
check "hadoop conftest: the shipped configuration is valid XML" "${A}/bin/hadoop" conftest
nn_http=$("${A}/bin/hdfs" getconf -confKey dfs.namenode.http-address 2>/dev/null)
expect_output "hadoop daemonlog -getlevel (the NameNode's)" "Effective Level" \
  "${A}/bin/hadoop" daemonlog -getlevel "${nn_http/0.0.0.0/127.0.0.1}" \
  org.apache.hadoop.hdfs.server.namenode.NameNode
expect_output "hadoop credential create (local keystore)" "has been successfully created" \
  "${A}/bin/hadoop" credential create e2e.alias -value s3cret -provider "jceks://file${work}/e2e.jceks"
expect_output "hadoop credential list" "e2e.alias" \
  "${A}/bin/hadoop" credential list -provider "jceks://file${work}/e2e.jceks"
expect_output "hadoop key create (local keystore)" "has been successfully created" \
  "${A}/bin/hadoop" key create e2e.key -provider "jceks://file${work}/e2e-keys.jceks"
expect_output "hadoop key list" "e2e.key" \
  "${A}/bin/hadoop" key list -provider "jceks://file${work}/e2e-keys.jceks"
check "hadoop distcp (HDFS to HDFS, a MapReduce job)" "${A}/bin/hadoop" distcp /e2e/in /e2e/distcp
[[ "$("${A}/bin/hdfs" dfs -cat '/e2e/distcp/part-m-*' | wc -c)" -eq $((rows * 100)) ]] &&
  pass "distcp copied every byte" || fail "distcp copied every byte"
check "hadoop archive (a MapReduce job)" "${A}/bin/hadoop" archive -archiveName in.har -p /e2e in \
  /e2e/har
[[ "$("${A}/bin/hdfs" dfs -cat 'har:///e2e/har/in.har/in/part-m-*' | wc -c)" -eq $((rows * 100)) ]] &&
  pass "the archive reads back every byte (har://)" || fail "the archive reads back every byte"
check "hdfs dfsadmin -allowSnapshot" "${A}/bin/hdfs" dfsadmin -allowSnapshot /e2e/in
check "hdfs dfs -createSnapshot" "${A}/bin/hdfs" dfs -createSnapshot /e2e/in s1
expect_output "hdfs lsSnapshottableDir" "/e2e/in" "${A}/bin/hdfs" lsSnapshottableDir
expect_output "hdfs snapshotDiff" "Difference between snapshot s1 and current directory" \
  "${A}/bin/hdfs" snapshotDiff /e2e/in s1 .
check "hdfs mover -p /e2e/in (after a storage policy change)" "${A}/bin/hdfs" mover -p /e2e/in
expect_output "sbin/hadoop-daemon.sh status namenode (deprecated, as in Hadoop 3)" \
  "is deprecated" "${A}/sbin/hadoop-daemon.sh" status namenode
expect_output "sbin/yarn-daemon.sh status resourcemanager" "is running as process" \
  "${A}/sbin/yarn-daemon.sh" status resourcemanager
expect_output "sbin/mr-jobhistory-daemon.sh status historyserver" "is running as process" \
  "${A}/sbin/mr-jobhistory-daemon.sh" status historyserver
expect_output "--debug shows the final command" "DEBUG: final command:" \
  "${A}/bin/hadoop" --debug version

phase "stop"
expect_output "stop-all.sh" "stopped namenode" "${A}/sbin/stop-all.sh"
left=$(jvms_of "${A}")
check "no Hadoop daemon JVM left after stop-all.sh" test -z "${left}"
check "no task JVM left after stop-all.sh" test -z "$(containers_of "${A}")"
out=$("${A}/bin/hdfs" --daemon status namenode 2>&1)
[[ $? -eq 3 ]] && pass "namenode status after stop is LSB 3" || fail "namenode status after stop is LSB 3" "${out}"

phase "a daemon that crashes during start-up"
bad="${work}/conf-bad-datanode"
cp -r "${A}/etc/hadoop" "${bad}"
touch "${work}/not-a-directory"
sed -i "s|</configuration>|  <property><name>dfs.datanode.data.dir</name><value>file://${work}/not-a-directory/dn</value></property>\n</configuration>|" \
  "${bad}/hdfs-site.xml"
expect_fail_with "a crashed datanode is named with its log" "datanode exited during start-up" \
  "${A}/sbin/start-dfs.sh" --config "${bad}"
check "the failed start stopped what it had started" test -z "$(jvms_of "${A}")"
expect_output "restart after the failure: start-dfs.sh" "HDFS ready" "${A}/sbin/start-dfs.sh"
expect_output "data survived the restart" "${rows}00" \
  bash -c "'${A}/bin/hdfs' dfs -cat '/e2e/out/part-r-*' | wc -c"
check "stop-dfs.sh" "${A}/sbin/stop-dfs.sh"

phase "MapReduce over Lustre without local disks (etc/hadoop/modes/lustre-no-local-disks)"
lconf="${work}/conf-lustre"
cp -r "${A}/etc/hadoop" "${lconf}" &&
  "${A}/sbin/hpc-cluster.sh" apply-mode --mode lustre-no-local-disks --conf-dir "${lconf}" >/dev/null
mnt="${A}/lustre" # the template's stand-in for the mount: ${env.HADOOP_HOME}/lustre
# The Lustre binding runs for real against rdma-native's liblustreapi test double: the marker
# file makes the stand-in a 4-OST "Lustre" mount; OSTs 0-1 sit on this host, 2-3 elsewhere.
double="$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)/rdma-native/target/native/build/test-lib/liblustreapi_double.so"
[[ -f "${double}" ]] || fail "the liblustreapi test double is built" "missing: ${double}"
mkdir -p "${mnt}" && echo "osts=4 stripe_size=1048576 stripe_count=1" >"${mnt}/.lustre-double"
lustre_props="<property><name>hadoop.hpc.lustreapi.lib</name><value>${double}</value></property>"
lustre_props+="<property><name>hadoop.hpc.lustre.stripe.size</name><value>4194304</value></property>"
lustre_props+="<property><name>hadoop.hpc.lustre.stripe.count</name><value>4</value></property>"
lustre_props+="<property><name>hadoop.hpc.lustre.ost.hosts</name><value>0-1=localhost,2-3=far-oss.invalid</value></property>"
sed -i -e '/<name>hadoop.hpc.lustre.stripe.size<\/name>/,+1d' -e '/<name>hadoop.hpc.lustre.stripe.count<\/name>/,+1d' \
  -e '/<name>hadoop.hpc.lustre.ost.hosts<\/name>/,+1d' -e 's|<value>134217728</value>|<value>4194304</value>|' \
  -e "s|</configuration>|  ${lustre_props}\n</configuration>|" "${lconf}/core-site.xml"
expect_output "start-all.sh starts YARN only when fs.defaultFS is not HDFS" "not starting HDFS" \
  "${A}/sbin/start-all.sh" --config "${lconf}"
out=$("${A}/bin/hdfs" --config "${lconf}" --daemon status namenode 2>&1)
[[ $? -eq 3 ]] && pass "no namenode in the Lustre mode" || fail "no namenode in the Lustre mode" "${out}"
lustre_log="${work}/terasort-lustre.log"
if "${A}/bin/hadoop" --config "${lconf}" jar "${ex}" teragen -Dmapreduce.job.maps=2 "${rows}" \
  "${mnt}/e2e/in" >"${work}/teragen-lustre.log" 2>&1 &&
  "${A}/bin/hadoop" --config "${lconf}" jar "${ex}" terasort -Dmapreduce.job.reduces=2 \
    -Dmapreduce.map.speculative=false "${mnt}/e2e/in" "${mnt}/e2e/out" >"${lustre_log}" 2>&1; then
  pass "teragen and terasort on the Lustre stand-in"
else
  fail "teragen and terasort on the Lustre stand-in" "$(tail -n 30 "${work}/teragen-lustre.log" "${lustre_log}")"
fi
in_layouts=$("${A}/bin/hadoop" --config "${lconf}" lustre "${mnt}"/e2e/in/part-m-0000{0,1} 2>&1)
out_layout=$("${A}/bin/hadoop" --config "${lconf}" lustre "${mnt}/e2e/out/part-r-00000" 2>&1)
[[ $(grep -c ': stripe size 4194304, count 4, OSTs' <<<"${in_layouts}${out_layout}") -eq 3 ]] &&
  pass "files jobs wrote on the mount carry the configured stripes (hadoop lustre)" ||
  fail "files jobs wrote on the mount carry the configured stripes (hadoop lustre)" "${in_layouts}${out_layout}"
local_blocks=$(grep -c 'hosts localhost$' <<<"${in_layouts}")
all_blocks=$(grep -c '^  block ' <<<"${in_layouts}")
data_local=$(sed -n 's/^[[:space:]]*Data-local map tasks=\([0-9]*\)$/\1/p' "${lustre_log}")
rack_local=$(sed -n 's/^[[:space:]]*Rack-local map tasks=\([0-9]*\)$/\1/p' "${lustre_log}")
[[ "${local_blocks}" -gt 0 && "${data_local:-0}" -eq "${local_blocks}" &&
  "${rack_local:-0}" -eq $((all_blocks - local_blocks)) ]] &&
  pass "the ${local_blocks} of ${all_blocks} splits on this host's OSTs ran data-local, the others not" ||
  fail "the splits on this host's OSTs ran data-local (data-local ${data_local:-0}, rack-local ${rack_local:-0}, want ${local_blocks} of ${all_blocks})" \
    "${in_layouts}"$'\n'"$(grep -i 'map tasks' "${lustre_log}")"
read_bytes=$(sed -n 's/^[[:space:]]*Bytes read straight from the shared Lustre mount=\([0-9]*\)$/\1/p' "${lustre_log}")
[[ "${read_bytes:-0}" -gt 0 ]] && ! grep -q 'Bytes fetched over' "${lustre_log}" &&
  pass "reducers read ${read_bytes} bytes straight from the mount, none over the network" ||
  fail "reducers read straight from the mount" "$(grep -A6 'HPC Shuffle' "${lustre_log}")"
[[ "$(cat "${mnt}"/e2e/out/part-r-* | sha256sum)" == "${stock_sum}" ]] &&
  pass "Lustre-mode TeraSort output is byte for byte stock's on HDFS" ||
  fail "Lustre-mode TeraSort output is byte for byte stock's on HDFS"
for _ in $(seq 30); do
  [[ -z "$(ls -A "${mnt}/shuffle" 2>/dev/null)" ]] && break
  sleep 1
done
check "the job's published map outputs are deleted after it" test -z "$(ls -A "${mnt}/shuffle")"
expect_output "stop-all.sh without HDFS" "stopped resourcemanager" "${A}/sbin/stop-all.sh" --config "${lconf}"
phase "HDFS storage mode hhh-m (etc/hadoop/modes/hhh-m)"
hconf="${work}/conf-hhh-m"
cp -r "${A}/etc/hadoop" "${hconf}" &&
  "${A}/sbin/hpc-cluster.sh" apply-mode --mode hhh-m --conf-dir "${hconf}" >/dev/null
# The template's RAM disk and locked memory, made this run's own and small.
ram="/dev/shm/hadoop-hpc-e2e-$$"
sed -i -e "s|\[RAM_DISK\]/dev/shm/hadoop-hpc-\${user.name}/\${env.HADOOP_HPC_NODE}/dfs/ram|[RAM_DISK]${ram}|" \
  -e 's|<value>4g</value>|<value>256m</value>|' "${hconf}/hdfs-site.xml"
badh="${work}/conf-hhh-m-bad"
cp -r "${hconf}" "${badh}"
sed -i 's|<value>256m</value>|<value>0</value>|' "${badh}/hdfs-site.xml"
expect_fail_with "hhh-m without locked memory is refused, naming the key" \
  "datanode failed to start: dfs.hpc.hhh.mode=hhh-m with [RAM_DISK] directories needs dfs.datanode.max.locked.memory > 0" \
  "${A}/sbin/start-dfs.sh" --config "${badh}"
check "the refused hhh-m start stopped what it had started" test -z "$(jvms_of "${A}")"
expect_output "start-dfs.sh in mode hhh-m" "HDFS ready" "${A}/sbin/start-dfs.sh" --config "${hconf}"
head -c 3000001 /dev/urandom >"${work}/hhh.bin"
for _ in $(seq 60); do # the NameNode gives / the mode's policy once out of safe mode
  [[ "$("${A}/bin/hdfs" --config "${hconf}" storagepolicies -getStoragePolicy -path / 2>/dev/null)" == *LAZY_PERSIST* ]] && break
  sleep 1
done
put_out=$("${A}/bin/hdfs" --config "${hconf}" dfs -put "${work}/hhh.bin" /hhh.bin 2>&1) &&
  pass "hdfs dfs -put in mode hhh-m" || fail "hdfs dfs -put in mode hhh-m" "${put_out}"
report=$("${A}/bin/hdfs" --config "${hconf}" hhh -report 2>&1)
grep -q 'HHH mode: hhh-m (dfs.hpc.hhh.mode); storage policy of /: LAZY_PERSIST' <<<"${report}" &&
  grep -qE '^  RAM_DISK .* 1$' <<<"${report}" &&
  pass "hdfs hhh -report: mode hhh-m, the new file's block on RAM_DISK" ||
  fail "hdfs hhh -report: mode hhh-m, the new file's block on RAM_DISK" "${report}"
[[ "$("${A}/bin/hdfs" --config "${hconf}" dfs -cat /hhh.bin | sha256sum)" == "$(sha256sum <"${work}/hhh.bin")" ]] &&
  pass "the file reads back from memory byte for byte" ||
  fail "the file reads back from memory byte for byte"
# The template turns HDFS DataTransfer over the transport on; the auto rule keeps stock TCP on a
# node without RDMA, and the DataNode's bean and both logs say so.
# A bean is a metrics snapshot at most one period (10 s) old: wait for the choice to show.
for _ in $(seq 30); do
  bean=$(curl -sf "http://127.0.0.1:9864/jmx?qry=Hadoop:service=DataNode,name=HpcDataTransfer-9866" 2>&1)
  grep -qE '"tag.Transport" *: *"(verbs|none)"' <<<"${bean}" &&
    ! grep -qE '"tag.StockTcpReason" *: *"not started"' <<<"${bean}" && break
  sleep 1
done
dnlog=$(cat "${A}"/logs/hadoop-*-datanode-*.log 2>/dev/null)
if compgen -G '/sys/class/infiniband/*' >/dev/null; then
  grep -qE '"tag.Transport" *: *"verbs"' <<<"${bean}" &&
    pass "hhh-m with RDMA: the DataNode's HpcDataTransfer bean names verbs" ||
    fail "hhh-m with RDMA: the DataNode's HpcDataTransfer bean names verbs" "${bean}"
else
  grep -qE '"tag.Transport" *: *"none"' <<<"${bean}" &&
    grep -qE '"tag.StockTcpReason" *: *"no usable RDMA' <<<"${bean}" &&
    grep -qE '"ServerConnectionsOverTransport" *: *0,' <<<"${bean}" &&
    pass "hhh-m without RDMA: the DataNode's HpcDataTransfer bean says stock TCP and why" ||
    fail "hhh-m without RDMA: the DataNode's HpcDataTransfer bean says stock TCP and why" "${bean}"
  grep -qF "HDFS DataTransfer: stock TCP only (no usable RDMA" <<<"${dnlog}" &&
    pass "the DataNode's log says it serves stock TCP only, and why" ||
    fail "the DataNode's log says it serves stock TCP only, and why" "$(grep -F 'DataTransfer' <<<"${dnlog}")"
  grep -qF "HDFS DataTransfer from this process: over stock TCP (no usable RDMA" <<<"${put_out}" &&
    pass "the client's one line says stock TCP, and why" ||
    fail "the client's one line says stock TCP, and why" "${put_out}"
fi
check "stop-dfs.sh (hhh-m)" "${A}/sbin/stop-dfs.sh" --config "${hconf}"
rm -rf "${ram}"
check "no JVM left at the end" test -z "$(jvms_of "${A}")$(jvms_of "${B}")"

trap - EXIT
stop_everything
phase ""
echo
echo "e2e phases:"
printf '  %s\n' "${phases[@]}"
if [[ ${failed} -gt 0 ]]; then
  echo "e2e failures:"
  printf '  %s\n' "${failures[@]}"
fi
echo "e2e: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
