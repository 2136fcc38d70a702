#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# A secure per-job cluster on this host, from the built tarball, as its owner and as another
# user would meet it: sbin/hpc-cluster.sh configure --secure and start (the job's KDC, then
# Kerberized daemons) on one host named localhost; the owner uses HDFS and YARN with nothing but
# the configuration directory; another user (a second Unix account when run as root, else this
# account without the keytab) with HADOOP_USER_NAME=<owner> and an empty ticket cache is refused
# by HDFS, by YARN's RPC and by the ResourceManager's REST API; MapReduce runs when the tarball
# has libhadoop (NativeIO), else the run reports the gap by name; stop leaves no JVM behind.
#
# Usage: [HPC_TEST_LIBHADOOP=libhadoop.so] secure-cluster.sh TARBALL WORKDIR
# Uses the ports of a default hpc-cluster.sh cluster (9000, 8032, 8088, ...): do not run it
# beside the e2e lane.
set -u

tarball=${1:?usage: secure-cluster.sh TARBALL WORKDIR}
work=${2:?usage: secure-cluster.sh TARBALL WORKDIR}
: "${JAVA_HOME:?JAVA_HOME must be set}"
export JAVA_HOME

# shellcheck source=lib/lane.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/lib/lane.sh"
gaps=()
ATTACKER=hpc-krb-attacker

## refused NAME TEXT COMMAND...: COMMAND must fail and say TEXT (an authentication refusal).
refused() {
  local name=$1 text=$2 out rc
  shift 2
  out=$("$@" 2>&1)
  rc=$?
  if [[ ${rc} -ne 0 ]] && grep -qE -- "${text}" <<<"${out}"; then
    pass "${name}"
  else
    fail "${name} (exit ${rc}; expected a refusal matching '${text}')" "${out}"
  fi
}

## http_code NAME WANT CURL_ARGS...: the HTTP status of a request must be WANT.
http_code() {
  local name=$1 want=$2 code
  shift 2
  code=$(as_attacker curl -s -o /dev/null -w '%{http_code}' --max-time 20 "$@")
  [[ "${code}" == "${want}" ]] && pass "${name}" || fail "${name} (HTTP ${code}, expected ${want})"
}

## port_free PORT: nothing listens on 127.0.0.1:PORT.
port_free() {
  ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

## JVMs of this test's cluster (their daemon marker names its pid dir under WORKDIR).
our_jvms() {
  local f
  for f in /proc/[0-9]*/cmdline; do
    if tr '\0' '\n' 2>/dev/null <"${f}" | grep -q -- "^-Dhadoop.hpc.daemon=.*@${work}/"; then
      f=${f#/proc/}
      echo "${f%/cmdline}"
    fi
  done
}

cleanup() {
  [[ -n "${H:-}" && -d "${C:-}" ]] && "${H}/sbin/hpc-cluster.sh" stop --conf-dir "${C}" >/dev/null 2>&1
  local pid
  for pid in $(our_jvms); do
    kill -KILL "${pid}" 2>/dev/null
  done
}
trap cleanup EXIT

phase "unpack and configure --secure"
for port in 9000 8032 8088 9871 10020; do
  if ! port_free "${port}"; then
    echo "port ${port} is in use (the e2e lane or another cluster?): not started"
    exit 1
  fi
done
rm -rf "${work}"
mkdir -p "${work}/home" || exit 1
chmod 755 "${work}"
tar xzf "${tarball}" -C "${work}/home" || { echo "cannot unpack ${tarball}"; exit 1; }
H=$(echo "${work}"/home/hadoop-hpc-*)
# HPC_TEST_LIBHADOOP=/path/libhadoop.so: a libhadoop (NativeIO) for the MapReduce step
if [[ -n "${HPC_TEST_LIBHADOOP:-}" ]]; then
  mkdir -p "${H}/lib/native" && cp "${HPC_TEST_LIBHADOOP}" "${H}/lib/native/libhadoop.so" || exit 1
fi
C="${work}/conf"
echo localhost >"${work}/hosts"
owner=$(id -un)
if out=$("${H}/sbin/hpc-cluster.sh" configure --conf-dir "${C}" --hosts "${work}/hosts" \
    --local-dir "${work}/local" --secure 2>&1); then
  pass "configure --secure"
else
  fail "configure --secure" "${out}"
  exit 1
fi
grep -q 'security   Kerberos realm HPC-' <<<"${out}" && pass "configure names the job's realm" ||
  fail "configure names the job's realm" "${out}"
[[ "$(stat -c %a "${C}") $(stat -c %a "${C}/security")" == "700 700" ]] &&
  pass "configuration and key directories are the owner's alone (700)" ||
  fail "configuration and key directories are the owner's alone (700): $(stat -c '%n %a' "${C}" "${C}/security")"
[[ "$(stat -c %a "${C}/ssl-server.xml")" == "600" ]] && pass "ssl-server.xml (key store password) is 600" ||
  fail "ssl-server.xml (key store password) is 600"
out=$("${H}/sbin/hpc-cluster.sh" configure --conf-dir "${work}/open" --hosts "${work}/hosts" \
  --local-dir "${work}/open-local" 2>&1)
grep -q 'NOTE: this cluster is open to every user' <<<"${out}" &&
  pass "an open configure says who can use the cluster" ||
  fail "an open configure says who can use the cluster" "${out}"
# lean JVMs for daemons and clients (the task JVMs keep the realm's options of mapred-site.xml)
# shellcheck disable=SC2016 # expanded by hadoop-env.sh
printf '\nexport HADOOP_OPTS="${HADOOP_OPTS:-} %s"\n' "${LANE_JVM}" >>"${C}/hadoop-env.sh"

phase "start: the job's KDC, then Kerberized daemons"
out=$(timeout 400 "${H}/sbin/hpc-cluster.sh" start --conf-dir "${C}" 2>&1)
rc=$?
echo "${out}" | grep -v '^  localhost *native' | sed 's/^/    /'
if [[ ${rc} -ne 0 ]]; then
  fail "secure cluster started (exit ${rc})" "$(tail -n 30 "${C}"/logs/*/*.log 2>/dev/null)"
  exit 1
fi
pass "secure cluster started"
for f in service.keytab user.keytab krb5.conf; do
  [[ "$(stat -c %a "${C}/security/${f}" 2>/dev/null)" == "600" ]] && pass "${f} written by the KDC, mode 600" ||
    fail "${f} written by the KDC, mode 600 ($(stat -c %a "${C}/security/${f}" 2>&1))"
done

phase "the owner: HDFS and YARN with the configuration directory alone"
echo "secret of ${owner}" >"${work}/owner.txt"
out=$("${H}/bin/hdfs" --config "${C}" dfs -put "${work}/owner.txt" /owner.txt 2>&1) &&
  pass "owner: hdfs dfs -put" || fail "owner: hdfs dfs -put" "${out}"
out=$("${H}/bin/hdfs" --config "${C}" dfs -cat /owner.txt 2>&1)
[[ "${out}" == "secret of ${owner}" ]] && pass "owner: hdfs dfs -cat reads it back" ||
  fail "owner: hdfs dfs -cat reads it back" "${out}"
out=$("${H}/bin/yarn" --config "${C}" application -list 2>&1)
grep -q 'Total number of applications' <<<"${out}" && pass "owner: yarn application -list" ||
  fail "owner: yarn application -list" "${out}"

phase "another user: no keytab, HADOOP_USER_NAME=${owner}, an empty ticket cache"
# What another user of the node can have: the site files (no keys), the realm's krb5.conf and
# the tarball; not the configuration directory.
A="${work}/attacker"
mkdir -p "${A}/conf" "${A}/logs"
cp "${C}"/{core,hdfs,yarn,mapred}-site.xml "${C}/capacity-scheduler.xml" "${C}/log4j.properties" "${A}/conf/"
cp "${C}/security/krb5.conf" "${A}/conf/"
# The YARN client retries a refused ResourceManager for 15 minutes by default: 20 s here.
sed -i 's|</configuration>|<property><name>yarn.resourcemanager.connect.max-wait.ms</name><value>20000</value></property>\n</configuration>|' \
  "${A}/conf/yarn-site.xml"
: >"${A}/krb5cc_empty"
printf 'export HADOOP_LOG_DIR=%q\nexport HADOOP_PID_DIR=%q\nexport HADOOP_OPTS="-Djava.security.krb5.conf=%s/conf/krb5.conf %s"\n' \
  "${A}/logs" "${A}/pids" "${A}" "${LANE_JVM}" >"${A}/conf/hadoop-env.sh"
if [[ $(id -u) -eq 0 ]] && { id "${ATTACKER}" >/dev/null 2>&1 ||
    useradd --no-create-home --shell /usr/sbin/nologin "${ATTACKER}" >/dev/null 2>&1; }; then
  chown -R "${ATTACKER}" "${A}"
  as_attacker() {
    runuser -u "${ATTACKER}" -- env -i PATH="${PATH}" JAVA_HOME="${JAVA_HOME}" HOME="${A}" \
      HADOOP_USER_NAME="${owner}" KRB5CCNAME="FILE:${A}/krb5cc_empty" "$@"
  }
  echo "  (as the Unix user ${ATTACKER})"
  refused "another user cannot read the owner's keytab" "Permission denied" \
    as_attacker cat "${C}/security/user.keytab"
else
  as_attacker() {
    env -i PATH="${PATH}" JAVA_HOME="${JAVA_HOME}" HOME="${A}" \
      HADOOP_USER_NAME="${owner}" KRB5CCNAME="FILE:${A}/krb5cc_empty" "$@"
  }
  echo "  (not root: as ${owner} without the keytab, a fresh ticket cache and no KRB5* variables)"
fi
krb_refusal='Client cannot authenticate via|GSS initiate failed|Failed to find any Kerberos tgt'
# The clients retry a failed authentication with back-off (a minute or so): all three at once.
as_attacker timeout 180 "${H}/bin/hdfs" --config "${A}/conf" dfs -ls / >"${A}/ls.out" 2>&1 &
ls_pid=$!
as_attacker timeout 180 "${H}/bin/hdfs" --config "${A}/conf" dfs -cat /owner.txt >"${A}/cat.out" 2>&1 &
cat_pid=$!
as_attacker timeout 180 "${H}/bin/yarn" --config "${A}/conf" application -kill application_1_0001 \
  >"${A}/kill.out" 2>&1 &
kill_pid=$!
wait "${ls_pid}"
ls_rc=$?
wait "${cat_pid}"
cat_rc=$?
wait "${kill_pid}"
kill_rc=$?
## ended RC FILE: FILE (a command's output), then exit code RC; for refused.
ended() {
  cat "$2"
  return "$1"
}
refused "another user: hdfs dfs -ls / is refused" "${krb_refusal}" ended "${ls_rc}" "${A}/ls.out"
refused "another user: hdfs dfs -cat of the owner's file is refused" "${krb_refusal}" \
  ended "${cat_rc}" "${A}/cat.out"
refused "another user: yarn application -kill is refused" "${krb_refusal}" \
  ended "${kill_rc}" "${A}/kill.out"
http_code "another user: REST apps?user.name=${owner} is 401" 401 \
  "http://localhost:8088/ws/v1/cluster/apps?user.name=${owner}"
http_code "another user: REST new-application POST is 401" 401 -X POST \
  "http://localhost:8088/ws/v1/cluster/apps/new-application?user.name=${owner}"
http_code "another user: WebHDFS ?user.name=${owner} is 401" 401 -k \
  "https://localhost:9871/webhdfs/v1/?op=LISTSTATUS&user.name=${owner}"
port_free 9870 && pass "no plain-HTTP NameNode port (dfs.http.policy HTTPS_ONLY)" ||
  fail "no plain-HTTP NameNode port (dfs.http.policy HTTPS_ONLY)"

phase "the owner: a MapReduce job"
# Under Kerberos the shuffle and spill files go through SecureIOUtils, which needs libhadoop's
# NativeIO in lib/native.
if [[ -f "${H}/lib/native/libhadoop.so" ]]; then
  out=$(timeout 300 "${H}/bin/yarn" --config "${C}" jar "$(echo "${H}"/share/hadoop/mapreduce/hadoop-mapreduce-examples-*.jar)" \
    pi 1 10 2>&1)
  grep -q 'Estimated value of Pi' <<<"${out}" && pass "owner: MapReduce pi job" ||
    fail "owner: MapReduce pi job" "${out}"
else
  gaps+=("MapReduce under Kerberos not run: ${H}/lib/native has no libhadoop.so (SecureIOUtils needs NativeIO)")
  echo "  GAP  ${gaps[-1]}"
fi

phase "stop"
out=$("${H}/sbin/hpc-cluster.sh" stop --conf-dir "${C}" 2>&1) && pass "stop" || fail "stop" "${out}"
grep -q 'stopped kdc' <<<"${out}" && pass "stop stops the job's KDC" || fail "stop stops the job's KDC" "${out}"
left=$(our_jvms)
[[ -z "${left}" ]] && pass "no JVM of the cluster left" || fail "no JVM of the cluster left: ${left}"
phase ""

echo
printf '%s\n' "${phases[@]}"
echo "secure cluster: ${passed} passed, ${failed} failed, ${#gaps[@]} gap(s)"
for f in "${failures[@]}"; do
  echo "  FAIL $f"
done
for f in "${gaps[@]}"; do
  echo "  GAP  $f"
done
[[ ${failed} -eq 0 ]]
