#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
# (Sourced by Hadoop's scripts, never run; the line above is for shellcheck and editors.)
#
# hadoop-hpc in an Apache Hadoop 3.5 installation, through Hadoop's own shell profiles
# (libexec/shellprofile.d, read by hadoop-functions.sh's hadoop_import_shellprofiles).
#
# Install: copy this file into $HADOOP_HOME/libexec/shellprofile.d/ (every command of that
# installation) or $HADOOP_CONF_DIR/shellprofile.d/ (every command using that configuration).
# It finds hadoop-hpc's jars in $HADOOP_HPC_HOME/share/hadoop-hpc, where HADOOP_HPC_HOME is an
# unpacked hadoop-hpc tarball, or, when unset, in $HADOOP_HOME/share/hadoop-hpc (the directory
# copied into the stock installation). Then every bin/hadoop, hdfs, yarn and mapred command:
#   - has hadoop-hpc's jars on its classpath (after Hadoop's own),
#   - has libhpcnative.so's directory on java.library.path,
#   - runs `hdfs datanode` as org.hadoophpc.hdfs.hhh.HpcDataNode: stock's DataNode after the
#     HHH mode checks, memory locking through libhpcnative and the RAM-disk checksum fix,
#   - knows `hdfs hhh -report` and `hadoop lustre <path>...`.
# MapReduce tasks do not run these scripts: share/hadoop-hpc/README.md lists their settings.

hadoop_add_profile hadoophpc

## The directory holding hadoop-hpc's jars, and whether it does.
_hadoophpc_jars_dir() {
  echo "${HADOOP_HPC_HOME:-${HADOOP_HOME}}/share/hadoop-hpc"
}

_hadoophpc_installed() {
  compgen -G "$(_hadoophpc_jars_dir)/hadoop-hpc-common-*.jar" >/dev/null
}

## One actionable line when the jars are not where this profile looks.
_hadoophpc_missing() {
  hadoop_error "ERROR: hadoop-hpc shell profile: no hadoop-hpc-common-*.jar in $(_hadoophpc_jars_dir);" \
    "set HADOOP_HPC_HOME to an unpacked hadoop-hpc tarball (in hadoop-env.sh), or copy its" \
    "share/hadoop-hpc into ${HADOOP_HOME}/share/"
}

_hadoophpc_hadoop_init() {
  if ! _hadoophpc_installed; then
    # Hadoop's own commands still work; ours below refuse with the same line.
    _hadoophpc_missing
  fi
}

_hadoophpc_hadoop_classpath() {
  if _hadoophpc_installed; then
    hadoop_add_classpath "$(_hadoophpc_jars_dir)/*" after
  fi
}

_hadoophpc_hadoop_nativelib() {
  if [[ -d "$(_hadoophpc_jars_dir)/native" ]]; then
    hadoop_add_javalibpath "$(_hadoophpc_jars_dir)/native"
  fi
}

## hadoop-hpc's class for one of our subcommands, or exit 1 with the missing-jars line.
_hadoophpc_class() {
  if ! _hadoophpc_installed; then
    _hadoophpc_missing
    exit 1
  fi
  # shellcheck disable=SC2034 # read by bin/hadoop, bin/hdfs
  HADOOP_CLASSNAME=$1
}

## hdfs datanode: hadoop-hpc's entry point, which checks and then runs stock's DataNode.
hdfs_subcommand_datanode() {
  if [[ -n "${HADOOP_SECURE_DN_USER:-}" ]] && declare -F hdfscmd_case >/dev/null; then
    # jsvc starts stock's SecureDataNodeStarter on privileged ports; our checks cannot run
    # there, and the HDFS transfer plugin refuses that set-up (user guide, chapter 9).
    hadoop_error "WARNING: hadoop-hpc shell profile: HADOOP_SECURE_DN_USER is set, so this is" \
      "stock's privileged-port DataNode (SecureDataNodeStarter) without hadoop-hpc's DataNode" \
      "checks; use SASL (dfs.data.transfer.protection) on an unprivileged port instead"
    hdfscmd_case datanode "$@"
    return
  fi
  # shellcheck disable=SC2034 # read by bin/hdfs
  HADOOP_SUBCMD_SUPPORTDAEMONIZATION=true
  _hadoophpc_class org.hadoophpc.hdfs.hhh.HpcDataNode
}

## hdfs hhh -report: the HHH storage mode and each DataNode's tiers.
hdfs_subcommand_hhh() {
  _hadoophpc_class org.hadoophpc.hdfs.hhh.HhhReport
}

## hadoop lustre <path>...: Lustre layout, block size and block hosts of files on the mount.
hadoop_subcommand_lustre() {
  _hadoophpc_class org.hadoophpc.fs.lustre.LustreTool
}
