# shellcheck shell=bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# A test double of Apache Hadoop 3's shell framework, as far as a shell profile sees it (sourced
# by shellprofile-test.sh). Stock's hadoop-functions.sh is not published on Maven Central, so
# this is written here from the documented contract, not from Hadoop's code:
#   - the public Shell API functions a profile calls (hadoop_add_profile, hadoop_add_classpath,
#     hadoop_add_javalibpath, hadoop_error, hadoop_debug), with their documented checks: a
#     classpath wildcard needs its directory, a library path entry must be a directory, no
#     duplicates, "before"/"after" hints (UnixShellAPI);
#   - the order a command runs a profile's hooks in: profiles are imported from
#     libexec/shellprofile.d then $HADOOP_CONF_DIR/shellprofile.d, then _<name>_hadoop_init,
#     stock's native directory then _<name>_hadoop_nativelib, stock's jars then
#     _<name>_hadoop_classpath, then the `<command>_subcommand_<sub>` function if one is defined
#     (dynamic subcommands) else the command's own case, then _<name>_hadoop_finalize
#     (UnixShellGuide: "Shell Profiles", "Dynamic Subcommands").
# Hadoop 3's bin/hdfs, bin/hadoop and hadoop-functions.sh (apache/hadoop on GitHub) were read
# to confirm that order and the function names; no line of them is here.

hadoop_error() {
  echo "$*" 1>&2
}

hadoop_debug() {
  [[ -n "${HADOOP_SHELL_SCRIPT_DEBUG:-}" ]] && echo "DEBUG: $*" 1>&2
  return 0
}

## hadoop_add_profile NAME: registers NAME once.
hadoop_add_profile() {
  [[ " ${HADOOP_SHELL_PROFILES} " == *" $1 "* ]] || HADOOP_SHELL_PROFILES="${HADOOP_SHELL_PROFILES} $1"
}

## hadoop_add_classpath OBJECT [before|after]: 1 when OBJECT (or a wildcard's directory) is missing.
hadoop_add_classpath() {
  if [[ "$1" == *'*' ]]; then
    [[ -d "$(dirname -- "$1")" ]] || return 1
  elif [[ ! -e "$1" ]]; then
    return 1
  fi
  if [[ -z "${CLASSPATH}" ]]; then
    CLASSPATH=$1
  elif [[ ":${CLASSPATH}:" != *":$1:"* ]]; then
    if [[ "${2:-}" == before ]]; then CLASSPATH="$1:${CLASSPATH}"; else CLASSPATH="${CLASSPATH}:$1"; fi
  fi
  return 0
}

## hadoop_add_javalibpath DIR [before|after]: 1 when DIR is not a directory.
hadoop_add_javalibpath() {
  [[ -d "$1" ]] || return 1
  if [[ -z "${JAVA_LIBRARY_PATH}" ]]; then
    JAVA_LIBRARY_PATH=$1
  elif [[ ":${JAVA_LIBRARY_PATH}:" != *":$1:"* ]]; then
    if [[ "${2:-}" == before ]]; then
      JAVA_LIBRARY_PATH="$1:${JAVA_LIBRARY_PATH}"
    else
      JAVA_LIBRARY_PATH="${JAVA_LIBRARY_PATH}:$1"
    fi
  fi
  return 0
}

## _double_hooks HOOK: runs _<profile>_hadoop_HOOK of every registered profile that defines it.
_double_hooks() {
  local p
  for p in ${HADOOP_SHELL_PROFILES}; do
    if declare -F "_${p}_hadoop_$1" >/dev/null; then "_${p}_hadoop_$1"; fi
  done
}

## The command's own subcommands (only what the tests need from stock's case statements).
_double_stock_case() {
  case "$1/$2" in
    hdfs/datanode)
      HADOOP_SUBCMD_SUPPORTDAEMONIZATION=true
      if [[ -n "${HADOOP_SECURE_DN_USER:-}" ]]; then
        HADOOP_CLASSNAME=org.apache.hadoop.hdfs.server.datanode.SecureDataNodeStarter
      else
        HADOOP_CLASSNAME=org.apache.hadoop.hdfs.server.datanode.DataNode
      fi
      ;;
    hdfs/namenode)
      HADOOP_SUBCMD_SUPPORTDAEMONIZATION=true
      HADOOP_CLASSNAME=org.apache.hadoop.hdfs.server.namenode.NameNode
      ;;
    yarn/nodemanager)
      HADOOP_SUBCMD_SUPPORTDAEMONIZATION=true
      HADOOP_CLASSNAME=org.apache.hadoop.yarn.server.nodemanager.NodeManager
      ;;
    *)
      [[ "$2" == *.* ]] || { hadoop_error "ERROR: $2 is not COMMAND nor fully qualified CLASSNAME."; exit 1; }
      HADOOP_CLASSNAME=$2
      ;;
  esac
}

## hadoop_double_command PROGRAM SUBCMD [ARGS...]: what PROGRAM SUBCMD would run, as lines
## CLASSNAME=, DAEMON=, CLASSPATH=, JAVA_LIBRARY_PATH=, PROFILES= (run it in a subshell: it may exit).
## Needs HADOOP_HOME; HADOOP_CONF_DIR defaults to $HADOOP_HOME/etc/hadoop.
hadoop_double_command() {
  local f
  HADOOP_SHELL_EXECNAME=$1
  HADOOP_SUBCMD=$2
  shift 2
  HADOOP_LIBEXEC_DIR="${HADOOP_HOME}/libexec"
  HADOOP_CONF_DIR="${HADOOP_CONF_DIR:-${HADOOP_HOME}/etc/hadoop}"
  HADOOP_SHELL_PROFILES=""
  CLASSPATH=""
  JAVA_LIBRARY_PATH=""
  HADOOP_CLASSNAME=""
  HADOOP_SUBCMD_SUPPORTDAEMONIZATION=false
  for f in "${HADOOP_LIBEXEC_DIR}"/shellprofile.d/*.sh "${HADOOP_CONF_DIR}"/shellprofile.d/*.sh; do
    # shellcheck disable=SC1090
    [[ -f "${f}" ]] && . "${f}"
  done
  _double_hooks init
  hadoop_add_javalibpath "${HADOOP_HOME}/lib/native"
  _double_hooks nativelib
  hadoop_add_classpath "${HADOOP_HOME}/share/hadoop/common/lib/*"
  _double_hooks classpath
  if declare -F "${HADOOP_SHELL_EXECNAME}_subcommand_${HADOOP_SUBCMD}" >/dev/null; then
    "${HADOOP_SHELL_EXECNAME}_subcommand_${HADOOP_SUBCMD}" "$@"
  else
    _double_stock_case "${HADOOP_SHELL_EXECNAME}" "${HADOOP_SUBCMD}"
  fi
  _double_hooks finalize
  echo "CLASSNAME=${HADOOP_CLASSNAME}"
  echo "DAEMON=${HADOOP_SUBCMD_SUPPORTDAEMONIZATION}"
  echo "CLASSPATH=${CLASSPATH}"
  echo "JAVA_LIBRARY_PATH=${JAVA_LIBRARY_PATH}"
  echo "PROFILES=${HADOOP_SHELL_PROFILES# }"
}

## Stock's own case statement for bin/hdfs, which the profile falls back to for secure DataNodes.
hdfscmd_case() {
  _double_stock_case hdfs "$1"
}
