#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Tests of libexec/hpc-functions.sh, function by function, without Java or daemons.
set -u

here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=../../hadoop-dist/src/main/libexec/hpc-functions.sh
. "${here}/../../hadoop-dist/src/main/libexec/hpc-functions.sh"

# shellcheck source=lib/assert.sh
. "${here}/lib/assert.sh"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

echo "== hpc_parse_args"
hpc_parse_args --config /etc/x --daemon start --loglevel DEBUG namenode -format
assert_eq "--config" /etc/x "${HADOOP_CONF_DIR}"
assert_eq "--daemon" start "${HPC_DAEMON_MODE}"
assert_eq "--loglevel" DEBUG "${HPC_LOGLEVEL}"
assert_eq "rest is the subcommand" "namenode -format" "${HPC_ARGV[*]}"
hpc_parse_args --workers --hostnames "h1 h2" dfs -ls /
assert_eq "--workers" true "${HPC_WORKERS}"
assert_eq "--hostnames" "h1 h2" "${HPC_HOSTNAMES}"
assert_eq "options after the subcommand are the subcommand's" "dfs -ls /" "${HPC_ARGV[*]}"
out=$( (hpc_parse_args --daemon restart namenode) 2>&1)
assert_eq "bad --daemon mode exits 1" 1 "$?"
assert_contains "bad --daemon mode is named" "--daemon takes start, stop or status, not 'restart'" "${out}"
unset HADOOP_CONF_DIR

hpc_parse_args --debug --hosts /etc/myhosts --workers dfs -ls /
assert_eq "--debug" true "${HPC_DEBUG}"
assert_eq "--hosts names the workers file" /etc/myhosts "${HADOOP_WORKERS}"
assert_eq "--hosts then the subcommand" "dfs -ls /" "${HPC_ARGV[*]}"
out=$(hpc_debug "decided X" 2>&1)
assert_eq "--debug prints DEBUG lines on stderr" "DEBUG: decided X" "${out}"
HPC_DEBUG=false
assert_eq "without --debug, nothing" "" "$(hpc_debug "decided X" 2>&1)"
unset HADOOP_WORKERS HPC_DEBUG

echo "== hpc_java_opts"
HADOOP_IDENT_STRING=u HPC_HOSTNAME=h HPC_LOGLEVEL="" HADOOP_HOME=/hh HADOOP_LOG_DIR=/logs
HADOOP_PID_DIR=/pids HADOOP_OPTS="-Da=1" HADOOP_CLIENT_OPTS="-Xmx3g -Dc=2"
# shellcheck disable=SC2034  # read by name (${!var}) in hpc_java_opts
HDFS_DFS_OPTS="-Dd=3" HDFS_NAMENODE_OPTS="-Dn=4"
hpc_java_opts hdfs dfs false true
assert_contains "a command takes HADOOP_OPTS, HADOOP_CLIENT_OPTS, then its own, in order" \
  "-Da=1 -Xmx3g -Dc=2 -Dd=3" "${HPC_JAVA_OPTS[*]}"
hpc_java_opts hdfs namenode true
assert_eq "a daemon does not take HADOOP_CLIENT_OPTS" "" \
  "$(printf '%s\n' "${HPC_JAVA_OPTS[@]}" | grep -e -Xmx3g)"
assert_contains "a daemon takes HADOOP_OPTS and its own" "-Da=1 -Dn=4" "${HPC_JAVA_OPTS[*]}"
HADOOP_HEAPSIZE_MIN=512 HADOOP_HEAPSIZE_MAX=2g hpc_java_opts hdfs namenode true
assert_contains "HADOOP_HEAPSIZE_MIN/MAX: plain numbers are MB, units kept" "-Xms512m -Xmx2g" \
  "${HPC_JAVA_OPTS[*]}"
unset HADOOP_IDENT_STRING HPC_HOSTNAME HADOOP_HOME HADOOP_LOG_DIR HADOOP_PID_DIR HADOOP_OPTS \
  HADOOP_CLIENT_OPTS HDFS_DFS_OPTS HDFS_NAMENODE_OPTS HPC_JAVA_OPTS

echo "== hpc_upper"
assert_eq "upper with dashes" "SECONDARY_NAME_NODE" "$(hpc_upper secondary-name-node)"

echo "== hpc_json_number"
jmx='{
  "beans" : [ {
    "name" : "Hadoop:service=NameNode,name=FSNamesystemState",
    "NumLiveDataNodes" : 3,
    "NumDeadDataNodes" : 0,
  } ]
}'
assert_eq "number field" 3 "$(hpc_json_number NumLiveDataNodes <<<"${jmx}")"
assert_eq "absent field is empty" "" "$(hpc_json_number NumActiveNMs <<<"${jmx}")"

echo "== hpc_private_dir"
## refused NAME PATH: hpc_private_dir PATH fails and makes nothing there; its message in ${out}.
refused() {
  out=$(hpc_private_dir "$2" 2>&1)
  assert_eq "$1" 1 "$?"
  [[ ! -e "$2" ]]
  assert_eq "$1: nothing made" 0 "$?"
}
# ${tmp} is under /tmp (sticky, everyone writes it): every directory below it must be ours, 700.
hpc_private_dir "${tmp}/pd/a/b"
assert_eq "makes what is missing" 0 "$?"
assert_eq "each one 700, ours" "700 700 700" \
  "$(stat -c %a "${tmp}/pd" "${tmp}/pd/a" "${tmp}/pd/a/b" | tr '\n' ' ' | sed 's/ $//')"
hpc_private_dir "${tmp}/pd/a/b"
assert_eq "all there, all ours: fine" 0 "$?"
mkdir -m 775 "${tmp}/open"
refused "a directory others may write is refused" "${tmp}/open/x"
assert_eq "saying which, its mode and what to do" "ERROR: ${tmp}/open has mode 775 but must be 700 (this user's alone): others may have put something in it. Remove it (it is made again, mode 700) or choose another directory" "${out}"
mkdir -m 755 "${tmp}/legacy"
hpc_private_dir "${tmp}/legacy/x"
assert_eq "one of ours only we could write to (older releases made them 755) is used" 0 "$?"
assert_eq "and set to 700" 700 "$(stat -c %a "${tmp}/legacy")"
mkdir -m 700 "${tmp}/elsewhere"
ln -s "${tmp}/elsewhere" "${tmp}/link"
refused "a symbolic link is refused" "${tmp}/link/x"
assert_contains "named as one" "${tmp}/link is a symbolic link (to ${tmp}/elsewhere)" "${out}"
[[ ! -e "${tmp}/elsewhere/x" ]]
assert_eq "nothing made where it points" 0 "$?"
mkdir -m 777 "${tmp}/shared"
refused "a directory everyone may write is refused" "${tmp}/shared/x"
chmod 1777 "${tmp}/shared"
hpc_private_dir "${tmp}/shared/x"
assert_eq "unless it has the sticky bit: then it is the trusted root, like /tmp" 0 "$?"
if [[ "$(id -u)" == 0 ]]; then
  mkdir -m 700 "${tmp}/theirs"
  chown 65534 "${tmp}/theirs"
  refused "another user's directory is refused" "${tmp}/theirs/x"
  assert_contains "naming its owner" "${tmp}/theirs belongs to $(id -nu 65534 2>/dev/null || echo UNKNOWN) (uid 65534) (mode 700), not to this user" "${out}"
else
  echo "  skip another user's directory (needs root to plant one)"
fi
refused "a relative path is refused" relative/x

echo "== hosts"
HPC_HOSTNAME=$(hostname)
hpc_is_local_host localhost
assert_eq "localhost is local" 0 "$?"
hpc_is_local_host 127.0.0.1
assert_eq "127.0.0.1 is local" 0 "$?"
hpc_is_local_host "${HPC_HOSTNAME}"
assert_eq "own host name is local" 0 "$?"
hpc_is_local_host worker7.example.invalid
assert_eq "another host is remote" 1 "$?"
printf '# comment\n\nnode1\n  node2  # trailing\n' >"${tmp}/workers"
assert_eq "workers file: comments and blanks dropped" "node1 node2" \
  "$(HADOOP_WORKERS="${tmp}/workers" hpc_workers | tr '\n' ' ' | sed 's/ $//')"
assert_eq "HADOOP_WORKER_NAMES wins over the file (spaces or commas)" "w1 w2 w3" \
  "$(HADOOP_WORKER_NAMES="w1 w2,w3" HADOOP_WORKERS="${tmp}/workers" hpc_workers | tr '\n' ' ' |
    sed 's/ $//')"
out=$(HADOOP_WORKERS="${tmp}/missing" hpc_workers 2>&1)
assert_contains "missing workers file explained" "no workers file" "${out}"
out=$(hpc_on_hosts "localhost 127.0.0.1" echo hi)
assert_eq "hpc_on_hosts runs locally once per host" "hi hi" "$(tr '\n' ' ' <<<"${out}" | sed 's/ $//')"
hpc_on_hosts "localhost" false
assert_eq "hpc_on_hosts fails when a host fails" 1 "$?"

echo "== daemon pid, status and stop"
HADOOP_PID_DIR="${tmp}/pids"
HADOOP_LOG_DIR="${tmp}/logs"
HADOOP_IDENT_STRING=tester
HADOOP_STOP_TIMEOUT=5
mkdir -p "${HADOOP_PID_DIR}" "${HADOOP_LOG_DIR}"
out=$(hpc_daemon_status fakenode)
assert_eq "never started: LSB 3" 3 "$?"
echo 999999 >"$(hpc_pid_file fakenode)"
out=$(hpc_daemon_status fakenode)
assert_eq "stale pid file: LSB 1" 1 "$?"
# A stand-in daemon carrying the marker bin/ gives every daemon JVM.
bash -c 'sleep 60; true' "-Dhadoop.hpc.daemon=fakenode@${HADOOP_PID_DIR}" &
fake=$!
echo "${fake}" >"$(hpc_pid_file fakenode)"
out=$(hpc_daemon_status fakenode)
assert_eq "running: LSB 0" 0 "$?"
assert_contains "running: names the pid" "process ${fake}" "${out}"
echo $$ >"$(hpc_pid_file fakenode)"
assert_eq "a recycled pid is not our daemon" "" "$(hpc_daemon_pid fakenode)"
assert_eq "found by marker without a pid file" "${fake}" "$(hpc_daemon_strays fakenode)"
out=$(hpc_daemon_stop fakenode)
assert_contains "stop reports" "stopped fakenode" "${out}"
wait "${fake}" 2>/dev/null
kill -0 "${fake}" 2>/dev/null
assert_eq "stopped process is gone" 1 "$?"
assert_eq "pid file removed" false "$([[ -f "$(hpc_pid_file fakenode)" ]] && echo true || echo false)"
out=$(hpc_daemon_stop fakenode)
assert_contains "stopping a stopped daemon is fine" "no fakenode to stop" "${out}"

echo "== hpc_explain_failure"
HPC_HOSTNAME=testhost
HADOOP_HOME=/opt/hadoop-hpc
cat >"$(hpc_log_file namenode)" <<'EOF'
2026-01-01 INFO NameNode: starting
2026-01-01 ERROR NameNode: Failed to start namenode.
java.net.BindException: Problem binding to [127.0.0.1:9000] java.net.BindException: Address already in use
EOF
out=$(hpc_explain_failure namenode 2>&1)
assert_contains "port clash names the port" "port 127.0.0.1:9000 is already in use" "${out}"
assert_contains "port clash names the daemon" "namenode failed to start" "${out}"
assert_contains "port clash names the log" "$(hpc_log_file namenode)" "${out}"
cat >"$(hpc_log_file namenode)" <<'EOF'
java.io.IOException: NameNode is not formatted.
EOF
out=$(hpc_explain_failure namenode 2>&1)
assert_contains "unformatted NameNode says how to format" "namenode -format" "${out}"
printf 'line1\nSomething odd happened\n' >"$(hpc_log_file datanode)"
out=$(hpc_explain_failure datanode 2>&1)
assert_contains "unknown failure shows the log's tail" "Something odd happened" "${out}"
out=$(hpc_explain_failure nodemanager 2>&1)
assert_contains "no log at all is said" "wrote no log" "${out}"

echo "== hpc_conf_load"
fake_java="${tmp}/fake-java"
HADOOP_CONF_DIR=/conf HADOOP_HOME=/hh
# shellcheck disable=SC2016  # the fake JVM's own script
printf '#!/usr/bin/env bash\nfor a; do [[ $a == *.*.* ]] && echo "$a=v-$a"; done; exit 0\n' \
  >"${fake_java}"
chmod +x "${fake_java}"
JAVA=${fake_java} hpc_conf_load a.b.c x.y.z
assert_eq "one line per key" "v-a.b.c v-x.y.z" "${HPC_CONF[a.b.c]} ${HPC_CONF[x.y.z]}"
printf '#!/usr/bin/env bash\necho "# There is insufficient memory for the JVM"\nexit 0\n' \
  >"${fake_java}"
out=$( (JAVA=${fake_java} hpc_conf_load a.b.c) 2>&1)
assert_eq "a JVM that printed no KEY= line stops the script" 1 "$?"
assert_contains "and says which keys, where" "cannot read a.b.c from the configuration in /conf" \
  "${out}"
assert_contains "with the JVM's own words" "  | # There is insufficient memory" "${out}"
printf '#!/usr/bin/env bash\nkill -9 $$\n' >"${fake_java}"
out=$( (JAVA=${fake_java} hpc_conf_load a.b.c) 2>&1)
assert_eq "a killed JVM stops the script" 1 "$?"
assert_contains "with its exit status" "exited 137" "${out}"
assert_contains "after one WARNING and a second try" "failed once" "${out}"
printf '#!/usr/bin/env bash\nif [[ -e %s/tried ]]; then echo "a.b.c=1"; else touch %s/tried; exit 134; fi\n' \
  "${tmp}" "${tmp}" >"${fake_java}"
out=$(JAVA=${fake_java} hpc_conf_load a.b.c 2>&1; echo "rc=$? ${HPC_CONF[a.b.c]}")
assert_contains "a JVM that fails once is tried again" "rc=0 1" "${out}"
assert_contains "and the first failure is said" "exited 134" "${out}"
printf '#!/usr/bin/env bash\nexec sleep 30\n' >"${fake_java}"
out=$( (HPC_JAVA_RUN_TIMEOUT=1 JAVA=${fake_java} hpc_conf_load a.b.c) 2>&1)
assert_eq "a JVM that hangs stops the script" 1 "$?"
assert_contains "within the time limit, which is named" \
  "did not finish within 1 s (HPC_JAVA_RUN_TIMEOUT) and was stopped" "${out}"
unset HADOOP_CONF_DIR HADOOP_HOME HPC_CONF

echo "== hadoop-user-functions.sh and the Hadoop 2 daemon scripts"
home="${tmp}/home"
mkdir -p "${home}/bin" "${home}/etc/hadoop"
printf '#!/usr/bin/env bash\necho "bin/hdfs $*"\n' >"${home}/bin/hdfs"
chmod +x "${home}/bin/hdfs"
printf 'hpc_workers() {\n  echo user-defined-worker\n}\n' >"${home}/etc/hadoop/hadoop-user-functions.sh"
out=$(HADOOP_HOME="${home}" HADOOP_CONF_DIR="${home}/etc/hadoop" HADOOP_HPC_NODE_HOST=h \
  bash -c '. "$1"; hpc_load_env; hpc_workers' _ \
  "${here}/../../hadoop-dist/src/main/libexec/hpc-functions.sh")
assert_eq "hadoop-user-functions.sh replaces a function" user-defined-worker "${out}"
out=$(HADOOP_HOME="${home}" hpc_deprecated_daemon hdfs hadoop-daemon.sh --config /c start \
  datanode -x 2>&1)
assert_contains "hadoop-daemon.sh warns" "hadoop-daemon.sh is deprecated" "${out}"
assert_contains "hadoop-daemon.sh runs hdfs --daemon" \
  "bin/hdfs --config /c --daemon start datanode -x" "${out}"
out=$(HADOOP_HOME="${home}" hpc_balancer start --config /c -threshold 5 2>&1)
assert_eq "start-balancer.sh" "bin/hdfs --config /c --daemon start balancer -threshold 5" "${out}"
out=$(HADOOP_HOME="${home}" hpc_balancer stop -threshold 5 2>&1)
assert_eq "stop-balancer.sh takes no balancer options" "bin/hdfs --daemon stop balancer" "${out}"
out=$( (HADOOP_HOME="${home}" hpc_deprecated_daemon yarn yarn-daemon.sh restart nodemanager) 2>&1)
assert_eq "a bad action exits 1" 1 "$?"
assert_contains "a bad action shows the usage" "usage: yarn-daemon.sh" "${out}"

echo "== hpc-security.sh (configure --secure)"
assert_eq "realm of a job" HPC-4711 "$(hpc_secure_realm 4711)"
assert_eq "realm: upper case, odd characters mapped to '-'" HPC-12-ABC-X "$(hpc_secure_realm '12.abc_x')"
assert_contains "realm outside a batch job" "HPC-" "$(hpc_secure_realm '')"
assert_eq "_HOST names: master, hosts, IB names, lower case, once each" "cn01-ib cn01 cn02 cn02-ib" \
  "$(hpc_secure_names cn01-ib -ib CN01 cn02 | tr '\n' ' ' | sed 's/ $//')"
mkdir "${tmp}/overlays"
# shellcheck disable=SC2016  # a Hadoop variable
hpc_secure_overlays "${tmp}/overlays" /c HPC-7 alice cn01 '${env.HADOOP_HPC_NODE_HOST}'
out=$(cat "${tmp}/overlays"/*.xml)
# shellcheck disable=SC2016  # auth_to_local's own $0 and $1
for want in "<name>hadoop.security.authentication</name>" "<value>kerberos</value>" \
    'RULE:[2:$1@$0](.*@HPC-7)s/.*/alice/' 'RULE:[1:$1@$0](.*@HPC-7)s/.*/alice/' \
    "<value>HTTPS_ONLY</value>" "<value>nn/_HOST@HPC-7</value>" "<value>dn/cluster@HPC-7</value>" \
    "<name>hadoop.http.authentication.simple.anonymous.allowed</name>" \
    "-Djava.security.krb5.conf=/c/security/krb5.conf" "<value>/c/security/service.keytab</value>"; do
  assert_contains "secure overlay holds ${want}" "${want}" "${out}"
done

echo
echo "shell: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
