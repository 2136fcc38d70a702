#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Tests of share/hadoop-hpc/shellprofile.d/hadoop-hpc.sh, the drop-in profile for a stock
# Apache Hadoop 3.5 installation, run by a double of Hadoop's shell framework
# (lib/hadoop-shell-api.sh): which class each command runs, the classpath and the library path,
# the profile's place (libexec or the configuration directory), HADOOP_HPC_HOME, missing jars
# and secure DataNodes. dropin.sh starts real daemons configured as the drop-in README says.
set -u

here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
profile="${here}/../../hadoop-dist/src/main/share-hadoop-hpc/shellprofile.d/hadoop-hpc.sh"
# shellcheck source=lib/assert.sh
. "${here}/lib/assert.sh"
tmp=$(mktemp -d)
trap 'rm -rf "${tmp}"' EXIT

## A stock installation at $1 (directories only, empty jars) with the profile in libexec.
stock_install() {
  mkdir -p "$1/libexec/shellprofile.d" "$1/etc/hadoop" "$1/lib/native" "$1/share/hadoop/common/lib"
  : >"$1/share/hadoop/common/lib/hadoop-common-3.5.0.jar"
}

## hadoop-hpc's jars and native directory under $1/share/hadoop-hpc.
hpc_jars() {
  mkdir -p "$1/share/hadoop-hpc/native"
  : >"$1/share/hadoop-hpc/hadoop-hpc-common-0.1.0.jar"
  : >"$1/share/hadoop-hpc/native/libhpcnative.so"
}

## run HOME PROGRAM SUBCMD [VAR=VALUE...]: the double's lines for that command, stderr too; its
## exit status.
run() {
  local home=$1 prog=$2 sub=$3
  shift 3
  # shellcheck disable=SC2016 # the inner script's own $1..$3
  env -u HADOOP_CONF_DIR -u HADOOP_HPC_HOME -u HADOOP_SECURE_DN_USER "$@" HADOOP_HOME="${home}" \
    bash -c '. "$1" && hadoop_double_command "$2" "$3"' _ "${here}/lib/hadoop-shell-api.sh" \
    "${prog}" "${sub}" 2>&1
}

line() {
  sed -n "s/^$1=//p" <<<"$2"
}

echo "== jars copied into the stock installation (\$HADOOP_HOME/share/hadoop-hpc)"
S="${tmp}/stock"
stock_install "${S}"
hpc_jars "${S}"
cp "${profile}" "${S}/libexec/shellprofile.d/"
out=$(run "${S}" hdfs datanode)
assert_eq "hdfs datanode runs hadoop-hpc's DataNode" org.hadoophpc.hdfs.hhh.HpcDataNode "$(line CLASSNAME "${out}")"
assert_eq "hdfs datanode stays a daemon (--daemon start works)" true "$(line DAEMON "${out}")"
assert_eq "our jars after Hadoop's" "${S}/share/hadoop/common/lib/*:${S}/share/hadoop-hpc/*" "$(line CLASSPATH "${out}")"
assert_eq "libhpcnative's directory after Hadoop's lib/native" "${S}/lib/native:${S}/share/hadoop-hpc/native" \
  "$(line JAVA_LIBRARY_PATH "${out}")"
assert_contains "no warning when installed" "hadoop-hpc shell profile" "${out}" absent
out=$(run "${S}" hdfs hhh)
assert_eq "hdfs hhh" org.hadoophpc.hdfs.hhh.HhhReport "$(line CLASSNAME "${out}")"
assert_eq "hdfs hhh is a client command" false "$(line DAEMON "${out}")"
out=$(run "${S}" hadoop lustre)
assert_eq "hadoop lustre" org.hadoophpc.fs.lustre.LustreTool "$(line CLASSNAME "${out}")"
out=$(run "${S}" hdfs namenode)
assert_eq "hdfs namenode is stock's" org.apache.hadoop.hdfs.server.namenode.NameNode "$(line CLASSNAME "${out}")"
out=$(run "${S}" yarn nodemanager)
assert_eq "yarn nodemanager is stock's" org.apache.hadoop.yarn.server.nodemanager.NodeManager \
  "$(line CLASSNAME "${out}")"
assert_contains "the NodeManager sees our jars (the shuffle service)" "${S}/share/hadoop-hpc/*" \
  "$(line CLASSPATH "${out}")"
assert_eq "one profile registered, named hadoophpc" hadoophpc "$(line PROFILES "${out}")"

echo "== an unpacked hadoop-hpc tarball elsewhere (HADOOP_HPC_HOME)"
S2="${tmp}/stock2"
H="${tmp}/hadoop-hpc-0.1.0"
stock_install "${S2}"
hpc_jars "${H}"
cp "${profile}" "${S2}/libexec/shellprofile.d/"
out=$(run "${S2}" hdfs datanode HADOOP_HPC_HOME="${H}")
assert_eq "HADOOP_HPC_HOME: our DataNode" org.hadoophpc.hdfs.hhh.HpcDataNode "$(line CLASSNAME "${out}")"
assert_contains "HADOOP_HPC_HOME: its jars" ":${H}/share/hadoop-hpc/*" "$(line CLASSPATH "${out}")"
assert_contains "HADOOP_HPC_HOME: its native directory" ":${H}/share/hadoop-hpc/native" \
  "$(line JAVA_LIBRARY_PATH "${out}")"

echo "== the profile in the configuration directory instead"
S3="${tmp}/stock3"
stock_install "${S3}"
hpc_jars "${S3}"
mkdir -p "${tmp}/conf/shellprofile.d"
cp "${profile}" "${tmp}/conf/shellprofile.d/"
out=$(run "${S3}" hdfs datanode HADOOP_CONF_DIR="${tmp}/conf")
assert_eq "\$HADOOP_CONF_DIR/shellprofile.d: our DataNode" org.hadoophpc.hdfs.hhh.HpcDataNode \
  "$(line CLASSNAME "${out}")"
out=$(run "${S3}" hdfs datanode)
assert_eq "another configuration directory: stock's DataNode" org.apache.hadoop.hdfs.server.datanode.DataNode \
  "$(line CLASSNAME "${out}")"

echo "== profile installed, jars missing"
S4="${tmp}/stock4"
stock_install "${S4}"
cp "${profile}" "${S4}/libexec/shellprofile.d/"
out=$(run "${S4}" hdfs namenode)
assert_eq "Hadoop's own commands still run" org.apache.hadoop.hdfs.server.namenode.NameNode "$(line CLASSNAME "${out}")"
assert_contains "one line says where the jars were looked for and what to do" \
  "ERROR: hadoop-hpc shell profile: no hadoop-hpc-common-*.jar in ${S4}/share/hadoop-hpc; set HADOOP_HPC_HOME" "${out}"
assert_eq "nothing of ours on the classpath" "${S4}/share/hadoop/common/lib/*" "$(line CLASSPATH "${out}")"
out=$(run "${S4}" hdfs datanode)
rc=$?
assert_eq "hdfs datanode exits 1 rather than run a DataNode without our checks" 1 "${rc}"
assert_contains "hdfs datanode names HADOOP_HPC_HOME" "set HADOOP_HPC_HOME to an unpacked hadoop-hpc tarball" "${out}"
assert_contains "hdfs datanode prints no class" "CLASSNAME=" "${out}" absent

echo "== secure (jsvc, privileged ports) DataNode"
out=$(run "${S}" hdfs datanode HADOOP_SECURE_DN_USER=hdfs)
assert_eq "HADOOP_SECURE_DN_USER: stock's SecureDataNodeStarter" \
  org.apache.hadoop.hdfs.server.datanode.SecureDataNodeStarter "$(line CLASSNAME "${out}")"
assert_contains "and a warning naming what is lost and the alternative" \
  "without hadoop-hpc's DataNode checks; use SASL (dfs.data.transfer.protection)" "${out}"

echo
echo "shell profile tests: ${passed} passed, ${failed} failed"
[[ ${failed} -eq 0 ]]
