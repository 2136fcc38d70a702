#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# The drop-in for a stock Apache Hadoop 3.5.0 installation, as an admin would apply it: a stock
# layout holding only Hadoop's published jars (from Maven Central, as the tarball ships them in
# share/hadoop/lib), share/hadoop-hpc copied in as its README's "Install" says, a stock
# single-node configuration plus exactly the README's setting blocks (extracted from the README,
# so the README and this test cannot drift), and stock daemons started by their main classes
# with `java -cp` (no hadoop-hpc script): NameNode, the DataNode the README's profile runs
# (HpcDataNode), ResourceManager, NodeManager, JobHistoryServer. Then TeraGen -> TeraSort
# (hpc shuffle, strict) -> TeraValidate, with the job's counters and the daemons' beans proving
# the shuffle and the HDFS blocks went over the transport (tcp here: no RDMA on the host).
#
# Usage: dropin.sh TARBALL WORKDIR
set -u

tarball=${1:?usage: dropin.sh TARBALL WORKDIR}
work=${2:?usage: dropin.sh TARBALL WORKDIR}
: "${JAVA_HOME:?JAVA_HOME must be set}"
export JAVA_HOME

# shellcheck source=lib/lane.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/lib/lane.sh"

rm -rf "${work}"
mkdir -p "${work}/t" "${work}/logs"
tar xzf "${tarball}" -C "${work}/t" || { echo "cannot unpack ${tarball}"; exit 1; }
T=$(echo "${work}"/t/hadoop-hpc-*)
readme="${T}/share/hadoop-hpc/README.md"

echo "== a stock Hadoop 3.5.0 layout of Hadoop's published jars"
S="${work}/stock"
mkdir -p "${S}/share/hadoop/common/lib" "${S}/share/hadoop/mapreduce" "${S}/libexec/shellprofile.d" \
  "${S}/lib/native" "${S}/etc/hadoop"
ln -s "${T}"/share/hadoop/lib/*.jar "${S}/share/hadoop/common/lib/"
ln -s "${T}/share/hadoop/hdfs" "${S}/share/hadoop/hdfs" # the web apps stock ships beside its jars
ln -s "${T}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar "${S}/share/hadoop/mapreduce/"
# shellcheck disable=SC2016 # python's own text
ours=$(python3 -c '
import sys, zipfile
for jar in sys.argv[1:]:
    if any(n.startswith("org/hadoophpc/") for n in zipfile.ZipFile(jar).namelist()):
        print(jar)' "${S}"/share/hadoop/common/lib/*.jar 2>&1)
n=$(find "${S}/share/hadoop/common/lib" -name '*.jar' | wc -l)
[[ -z "${ours}" ]] && pass "no hadoop-hpc class in the stock layout's ${n} jars" ||
  fail "no hadoop-hpc class in the stock layout's jars" "${ours}"

echo "== install as share/hadoop-hpc/README.md says"
# The README's two commands, run with HADOOP_HOME set to the stock layout.
install_cmds=$(sed -n '/^## 1. Install/,/^## 2/p' "${readme}" | sed -n 's/^    \(cp .*\)$/\1/p')
[[ $(wc -l <<<"${install_cmds}") -eq 2 ]] && pass "the README's Install section has its two commands" ||
  fail "the README's Install section has its two commands" "${install_cmds}"
if out=$(cd "${T}" && HADOOP_HOME="${S}" bash -euc "${install_cmds}" 2>&1); then
  pass "README install commands"
else
  fail "README install commands" "${out}"
fi
[[ -f "${S}/libexec/shellprofile.d/hadoop-hpc.sh" ]] && compgen -G "${S}/share/hadoop-hpc/hadoop-hpc-common-*.jar" >/dev/null &&
  pass "profile and jars in place" || fail "profile and jars in place"

## readme_blocks FILE: the properties of the README's ```xml blocks headed <!-- FILE -->.
readme_blocks() {
  awk -v file="$1" '
    /^```xml$/ { inblock = 1; take = 0; next }
    /^```$/ { inblock = 0; next }
    inblock && /^<!-- / { take = ($2 == file); next }
    inblock && take { print }' "${readme}"
}

## site FILE NAME VALUE...: a stock setting pair per argument pair, then the README's blocks for
## FILE (the README's value wins over a stock one of the same name).
site() {
  local file=$1 dropped="" from_readme
  shift
  from_readme=$(readme_blocks "${file}")
  {
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<configuration>'
    while [[ $# -gt 0 ]]; do
      if grep -qF "<name>$1</name>" <<<"${from_readme}"; then
        dropped="${dropped} $1"
      else
        printf '  <property><name>%s</name><value>%s</value></property>\n' "$1" "$2"
      fi
      shift 2
    done
    printf '%s\n' "${from_readme}"
    echo '</configuration>'
  } >"${S}/etc/hadoop/${file}"
  echo "    ${file}: $(grep -c '<property>' <<<"${from_readme}") setting(s) from the README${dropped:+ (replacing the stock value of${dropped})}"
}

C="${S}/etc/hadoop"
data="${work}/data"
# Stock's single-node settings (ports moved off the defaults so no other cluster is disturbed).
site core-site.xml fs.defaultFS hdfs://127.0.0.1:19300 hadoop.tmp.dir "${data}"
site hdfs-site.xml dfs.replication 1 \
  dfs.namenode.rpc-address 127.0.0.1:19300 dfs.namenode.http-address 127.0.0.1:19301 \
  dfs.namenode.secondary.http-address 127.0.0.1:19302 dfs.datanode.address 127.0.0.1:19303 \
  dfs.datanode.http.address 127.0.0.1:19304 dfs.datanode.ipc.address 127.0.0.1:19305 \
  dfs.namenode.safemode.extension 0
site yarn-site.xml yarn.resourcemanager.hostname 127.0.0.1 \
  yarn.resourcemanager.address 127.0.0.1:19310 yarn.resourcemanager.scheduler.address 127.0.0.1:19311 \
  yarn.resourcemanager.resource-tracker.address 127.0.0.1:19312 \
  yarn.resourcemanager.admin.address 127.0.0.1:19313 yarn.resourcemanager.webapp.address 127.0.0.1:19314 \
  yarn.nodemanager.hostname 127.0.0.1 yarn.nodemanager.address 127.0.0.1:19320 \
  yarn.nodemanager.localizer.address 127.0.0.1:19321 yarn.nodemanager.webapp.address 127.0.0.1:19322 \
  mapreduce.shuffle.port 19323 \
  yarn.nodemanager.aux-services mapreduce_shuffle \
  yarn.nodemanager.aux-services.mapreduce_shuffle.class org.apache.hadoop.mapred.ShuffleHandler \
  yarn.nodemanager.env-whitelist JAVA_HOME,HADOOP_COMMON_HOME,HADOOP_HDFS_HOME,HADOOP_CONF_DIR,CLASSPATH_PREPEND_DISTCACHE,HADOOP_YARN_HOME,HADOOP_HOME,HADOOP_MAPRED_HOME,PATH,LANG,TZ \
  yarn.nodemanager.resource.memory-mb 6144 yarn.scheduler.minimum-allocation-mb 512 \
  yarn.nodemanager.vmem-check-enabled false \
  yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage 99.0
site mapred-site.xml mapreduce.framework.name yarn \
  mapreduce.jobhistory.address 127.0.0.1:19330 mapreduce.jobhistory.webapp.address 127.0.0.1:19331 \
  mapreduce.jobhistory.admin.address 127.0.0.1:19332 \
  yarn.app.mapreduce.am.env "HADOOP_MAPRED_HOME=${S}" mapreduce.map.env "HADOOP_MAPRED_HOME=${S}" \
  mapreduce.reduce.env "HADOOP_MAPRED_HOME=${S}" \
  yarn.app.mapreduce.am.resource.mb 1024 mapreduce.map.memory.mb 768 mapreduce.reduce.memory.mb 768
site capacity-scheduler.xml yarn.scheduler.capacity.root.queues default \
  yarn.scheduler.capacity.root.default.capacity 100 \
  yarn.scheduler.capacity.root.default.maximum-capacity 100 \
  yarn.scheduler.capacity.maximum-am-resource-percent 0.5
lean_jvms "${C}" # tasks' and clients' JVMs; the daemons below take LANE_JVM themselves
cat >"${C}/log4j.properties" <<'EOF'
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
EOF
for f in core-site.xml hdfs-site.xml yarn-site.xml mapred-site.xml capacity-scheduler.xml; do
  if out=$(python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "${C}/${f}" 2>&1); then
    pass "${f} is well-formed"
  else
    fail "${f} is well-formed" "${out}"
  fi
done

# What Hadoop's scripts would put together with the profile: stock's jars, then ours; stock's
# native directory, then ours (shellprofile-test.sh checks the profile yields exactly this).
CP="${C}:${S}/share/hadoop/common/lib/*:${S}/share/hadoop/hdfs:${S}/share/hadoop/mapreduce/*:${S}/share/hadoop-hpc/*"
LIBPATH="${S}/lib/native:${S}/share/hadoop-hpc/native"
export HADOOP_HOME="${S}" HADOOP_COMMON_HOME="${S}" HADOOP_HDFS_HOME="${S}" HADOOP_YARN_HOME="${S}" \
  HADOOP_MAPRED_HOME="${S}" HADOOP_CONF_DIR="${C}"

## jrun HEAP CLASS ARGS...: a JVM on the drop-in classpath, in the foreground (at most 5 min).
jrun() {
  local heap=$1
  shift
  timeout -k 10 300 "${JAVA_HOME}/bin/java" "-Xmx${heap}" "-Dhadoop.home.dir=${S}" "-Dhadoop.log.dir=${work}/logs" "-Dyarn.log.dir=${work}/logs" \
    "-Djava.library.path=${LIBPATH}" -Djava.net.preferIPv4Stack=true -cp "${CP}" "$@"
}

pids=()
## daemon NAME HEAP CLASS: a daemon in the background (the JVM itself, so its pid is $!), its
## output in logs/NAME.log.
daemon() {
  local name=$1 heap=$2 class=$3
  # shellcheck disable=SC2086 # LANE_JVM is a list of options
  "${JAVA_HOME}/bin/java" "-Xmx${heap}" "-Dhadoop.home.dir=${S}" "-Dhadoop.log.dir=${work}/logs" "-Dyarn.log.dir=${work}/logs" \
    "-Djava.library.path=${LIBPATH}" -Djava.net.preferIPv4Stack=true ${LANE_JVM} -cp "${CP}" "${class}" \
    >"${work}/logs/${name}.log" 2>&1 &
  pids+=($!)
  echo "    started ${name} (${class}, pid ${pids[-1]})"
}

stop_all() {
  local p
  [[ ${#pids[@]} -gt 0 ]] || return 0
  kill "${pids[@]}" 2>/dev/null
  for _ in $(seq 40); do
    alive=0
    for p in "${pids[@]}"; do kill -0 "${p}" 2>/dev/null && alive=1; done
    [[ ${alive} -eq 0 ]] && break
    sleep 0.5
  done
  kill -9 "${pids[@]}" 2>/dev/null
  # task JVMs of this cluster, if a job was cut short
  pkill -9 -f -- "${data}/nm-local-dir" 2>/dev/null
  pids=()
}
trap stop_all EXIT

## wait_for NAME SECONDS COMMAND...: until COMMAND succeeds; fails NAME after SECONDS.
wait_for() {
  local name=$1 limit=$2 t=${SECONDS}
  shift 2
  while ! "$@" >/dev/null 2>&1; do
    if ((SECONDS - t > limit)); then
      fail "${name} within ${limit}s"
      return 1
    fi
    sleep 1
  done
  pass "${name} ($((SECONDS - t)) s)"
}

bean() {
  curl -sf "http://127.0.0.1:$1/jmx?qry=$2"
}

## attr JSON NAME: a numeric attribute of a bean.
attr() {
  sed -n "s/.*\"$2\" *: *\([0-9]*\).*/\1/p" <<<"$1" | head -n 1
}

hdfs_ready() {
  [[ "$(attr "$(bean 19301 Hadoop:service=NameNode,name=FSNamesystemState)" NumLiveDataNodes)" == 1 ]] &&
    bean 19301 Hadoop:service=NameNode,name=NameNodeInfo | grep -q '"Safemode" *: *""'
}

yarn_ready() {
  curl -sf http://127.0.0.1:19314/ws/v1/cluster/metrics | grep -q '"activeNodes":1'
}

jhs_ready() {
  curl -sf http://127.0.0.1:19331/ws/v1/history/info
}

echo "== stock daemons by their main classes"
busy=""
for port in 19300 19301 19303 19304 19305 19310 19311 19312 19313 19314 19320 19321 19322 19323 \
  19324 19330 19331 19332 29303; do
  (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null && busy="${busy} ${port}"
done
if [[ -n "${busy}" ]]; then
  fail "ports free for the drop-in cluster: in use:${busy} (a cluster left by an earlier run?)"
  exit 1
fi
if out=$(jrun 256m org.apache.hadoop.hdfs.server.namenode.NameNode -format -nonInteractive 2>&1); then
  pass "NameNode -format"
else
  fail "NameNode -format" "${out}"
fi
daemon namenode 512m org.apache.hadoop.hdfs.server.namenode.NameNode
daemon datanode 512m org.hadoophpc.hdfs.hhh.HpcDataNode
daemon resourcemanager 768m org.apache.hadoop.yarn.server.resourcemanager.ResourceManager
daemon nodemanager 512m org.apache.hadoop.yarn.server.nodemanager.NodeManager
daemon historyserver 384m org.apache.hadoop.mapreduce.v2.hs.JobHistoryServer
ready=true
wait_for "HDFS out of safe mode with 1 DataNode" 180 hdfs_ready || ready=false
wait_for "YARN with 1 NodeManager" 180 yarn_ready || ready=false
wait_for "JobHistoryServer answers" 180 jhs_ready || ready=false
if [[ "${ready}" != true ]]; then
  for n in namenode datanode resourcemanager nodemanager historyserver; do
    echo "--- ${n}: last lines"
    grep -E 'ERROR|Exception|FATAL' "${work}/logs/${n}.log" | tail -n 5
  done
  echo "drop-in: ${passed} passed, ${failed} failed"
  exit 1
fi

dnlog=$(cat "${work}/logs/datanode.log")
grep -q 'hadoop-hpc DataNode: HHH mode' <<<"${dnlog}" &&
  pass "the DataNode is hadoop-hpc's entry point (HHH checks ran)" ||
  fail "the DataNode is hadoop-hpc's entry point (HHH checks ran)" "$(head -n 20 <<<"${dnlog}")"
grep -q 'HDFS DataTransfer: tcp transport listening on /127.0.0.1:29303' <<<"${dnlog}" &&
  pass "the DataNode listens on the tcp transport (transfer port + README offset)" ||
  fail "the DataNode listens on the tcp transport (transfer port + README offset)" "$(grep -F DataTransfer <<<"${dnlog}")"
grep -q 'hpc shuffle serving map outputs on' "${work}/logs/nodemanager.log" &&
  ! grep -q 'hpc shuffle NOT started' "${work}/logs/nodemanager.log" &&
  pass "the NodeManager runs hadoop-hpc's shuffle service" ||
  fail "the NodeManager runs hadoop-hpc's shuffle service" "$(grep -i shuffle "${work}/logs/nodemanager.log" | tail -n 5)"

echo "== TeraGen -> TeraSort (hpc shuffle, strict) -> TeraValidate"
EX=$(echo "${S}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar)
rows=${HPC_DROPIN_ROWS:-50000}
## job NAME ARGS...: a job of the examples jar, bounded (a hang fails the step, not the run).
job() {
  local log="${work}/logs/$1.log"
  shift
  timeout -k 10 600 "${JAVA_HOME}/bin/java" -Xmx384m "-Dhadoop.home.dir=${S}" \
    "-Djava.library.path=${LIBPATH}" -Djava.net.preferIPv4Stack=true -cp "${CP}" \
    org.apache.hadoop.util.RunJar "${EX}" "$@" >"${log}" 2>&1
}
job teragen teragen -Dmapreduce.job.maps=2 "${rows}" /dropin/in &&
  pass "teragen ${rows} rows" || fail "teragen ${rows} rows" "$(tail -n 30 "${work}/logs/teragen.log")"
job terasort terasort -Dmapreduce.job.reduces=2 \
  -Dmapreduce.hpc.shuffle.reducer.fails.without.hpc=true /dropin/in /dropin/out &&
  pass "terasort, 2 reducers, hpc shuffle strict" ||
  fail "terasort, 2 reducers, hpc shuffle strict" "$(tail -n 30 "${work}/logs/terasort.log")"
job teravalidate teravalidate /dropin/out /dropin/report &&
  pass "teravalidate" || fail "teravalidate" "$(tail -n 30 "${work}/logs/teravalidate.log")"
report=$(jrun 256m org.apache.hadoop.fs.FsShell -cat '/dropin/report/part-r-*' 2>&1)
grep -q '^checksum' <<<"${report}" && ! grep -q '^error' <<<"${report}" &&
  pass "teravalidate: sorted, no errors" || fail "teravalidate: sorted, no errors" "${report}"

counter() {
  sed -n "s/^[[:space:]]*$2=\([0-9]*\)$/\1/p" "${work}/logs/$1.log" | head -n 1
}
tcp=$(counter terasort 'Bytes fetched over tcp')
shuffled=$(counter terasort 'Reduce shuffle bytes')
[[ "${tcp:-0}" -gt 0 && "${tcp}" == "${shuffled}" ]] && ! grep -q 'Reducers that fell back' "${work}/logs/terasort.log" &&
  pass "every shuffled byte through the hpc shuffle: Bytes fetched over tcp=${tcp} of Reduce shuffle bytes=${shuffled}" ||
  fail "every shuffled byte through the hpc shuffle (tcp '${tcp}', shuffle bytes '${shuffled}')" \
    "$(grep -A4 'HPC Shuffle' "${work}/logs/terasort.log")"

# The job counters of HDFS over the transport (File System Counters, scheme HDFS-TRANSPORT).
written=$(counter teragen 'HDFS-TRANSPORT: Number of bytes written')
read_back=$(counter terasort 'HDFS-TRANSPORT: Number of bytes read')
[[ "${written:-0}" -ge $((rows * 100)) && "${read_back:-0}" -ge $((rows * 100)) ]] &&
  pass "job counters: teragen HDFS-TRANSPORT bytes written ${written}, terasort bytes read ${read_back} (>= $((rows * 100)))" ||
  fail "job counters HDFS-TRANSPORT bytes written/read >= $((rows * 100)) (teragen '${written}', terasort '${read_back}')" \
    "$(grep -h 'HDFS' "${work}/logs/teragen.log" "${work}/logs/terasort.log")"

# Beans are metrics snapshots at most one period (10 s) old.
for _ in $(seq 30); do
  nm=$(bean 19322 Hadoop:service=NodeManager,name=HpcShuffleMetrics)
  dn=$(bean 19304 Hadoop:service=DataNode,name=HpcDataTransfer-19303)
  [[ "$(attr "${nm}" BytesServedOverTcp)" -ge "${tcp:-1}" && "$(attr "${dn}" TransportBytesIn)" -gt 0 ]] 2>/dev/null && break
  sleep 1
done
served=$(attr "${nm}" BytesServedOverTcp)
[[ "${served:-0}" -ge "${tcp:-1}" ]] &&
  pass "NodeManager bean HpcShuffleMetrics: BytesServedOverTcp ${served}" ||
  fail "NodeManager bean HpcShuffleMetrics: BytesServedOverTcp >= ${tcp}" "${nm}"
conns=$(attr "${dn}" ServerConnectionsOverTransport)
bytes_in=$(attr "${dn}" TransportBytesIn)
gen=$((rows * 100))
[[ "${conns:-0}" -gt 0 && "${bytes_in:-0}" -ge "${gen}" ]] && grep -qE '"tag.Transport" *: *"tcp"' <<<"${dn}" &&
  pass "DataNode bean HpcDataTransfer-19303: tcp, ${conns} streams, ${bytes_in} bytes in (>= ${gen} generated)" ||
  fail "DataNode bean HpcDataTransfer-19303: tcp, streams > 0, bytes in >= ${gen}" "${dn}"

# Every container (the AM, maps, reducers) loaded libhpcnative through the README's
# admin.user.env keys: their transport line names the missing device, not the library.
lines=$(cat "${work}"/logs/userlogs/application_*/container_*/syslog 2>/dev/null | grep -F 'TransportFactory: using')
n=$(grep -c 'no RDMA devices found' <<<"${lines}")
[[ "${n}" -gt 0 ]] && ! grep -q 'libhpcnative unavailable' <<<"${lines}" &&
  pass "every container loaded libhpcnative.so (${n} transport lines, none without the library)" ||
  fail "every container loaded libhpcnative.so" "${lines}"

echo "== hadoop-hpc's commands on the drop-in classpath"
out=$(jrun 256m org.hadoophpc.hdfs.hhh.HhhReport -report 2>&1)
grep -q 'HHH mode' <<<"${out}" && pass "hdfs hhh -report (HhhReport)" || fail "hdfs hhh -report (HhhReport)" "${out}"
out=$(jrun 256m org.hadoophpc.nativeio.CheckNative 2>&1)
grep -qE "^hpcnative: +true +${S}/share/hadoop-hpc/native/libhpcnative.so" <<<"${out}" &&
  pass "CheckNative loads libhpcnative.so from share/hadoop-hpc/native" ||
  fail "CheckNative loads libhpcnative.so from share/hadoop-hpc/native" "${out}"

stop_all
left=$(pgrep -f -- "-Dhadoop.home.dir=${S}" || true)
[[ -z "${left}" ]] && pass "no JVM left after the stop" || fail "no JVM left after the stop" "${left}"

echo
echo "drop-in: ${passed} passed, ${failed} failed"
if [[ ${failed} -gt 0 ]]; then
  printf '  FAIL %s\n' "${failures[@]}"
  exit 1
fi
