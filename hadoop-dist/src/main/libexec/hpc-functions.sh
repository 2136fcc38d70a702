#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Shared by bin/ and sbin/: option parsing, environment, classpath, daemon lifecycle and
# readiness checks. Conventions follow Hadoop 3's shell: --config, --daemon start|stop|status,
# --workers, HADOOP_CONF_DIR / HADOOP_LOG_DIR / HADOOP_PID_DIR, ${PROGRAM}_${SUBCMD}_OPTS,
# errors to stderr as "ERROR: ...". Sourced, never run.

# ---------------------------------------------------------------------------------------------
# messages

hpc_error() {
  echo "ERROR: $*" >&2
}

hpc_warn() {
  echo "WARNING: $*" >&2
}

hpc_info() {
  echo "$*"
}

# ---------------------------------------------------------------------------------------------
# private directories in shared places

## hpc_private_dir DIR: makes DIR and each missing directory above it up to its trusted root,
## mode 700, one at a time; refuses (ERROR naming the path, its owner and mode, and what to do;
## returns 1) one already there that is a symbolic link, not this user's, or writable by group
## or others. One of this user's that only it could write to (755: older releases made them with
## the umask) is set to 700 and used: nothing of anyone else's can be in it. The
## trusted root is the deepest existing directory above DIR that everyone may write with the
## sticky bit set (/tmp, /dev/shm), else the deepest existing one; it must belong to root or to
## this user, and have the sticky bit if others may write to it. Other users can make any name
## in a shared place first: a directory of theirs (or a link) would let them read or replace
## ours. The same rule as the Java side's org.hadoophpc.fs.PrivateDirs.
hpc_private_dir() {
  local dir uid a st mode kind root="" existing="" rel parts part p
  if [[ "$1" != /* ]] || ! dir=$(realpath -ms -- "$1") || [[ "${dir}" == / ]]; then
    hpc_error "hpc_private_dir: '$1' is not an absolute path below /"
    return 1
  fi
  uid=$(id -u)
  a=${dir%/*}
  while :; do
    a=${a:-/}
    if st=$(stat -c '%a %F' -- "${a}" 2>/dev/null); then
      existing=${existing:-${a}}
      mode=${st%% *}
      kind=${st#* }
      if [[ "${kind}" == directory ]] && (( (8#${mode} & 01002) == 01002 )); then
        root=${a}
        break
      fi
    fi
    [[ "${a}" == / ]] && break
    a=${a%/*}
  done
  root=${root:-${existing:-/}}
  st=$(stat -L -c '%u %a %F' -- "${root}") || return 1
  read -r a mode kind <<<"${st}"
  if [[ "${kind}" != directory ]]; then
    hpc_error "${root} is not a directory"
    return 1
  elif [[ "${a}" != 0 && "${a}" != "${uid}" ]]; then
    hpc_error "${root} belongs to $(stat -L -c %U -- "${root}") (uid ${a}) (mode ${mode}), neither to root nor to this user $(id -un) (uid ${uid}): its owner could replace what is made there. Choose a directory of this user's or a shared one owned by root"
    return 1
  elif (( (8#${mode} & 022) != 0 && (8#${mode} & 01000) == 0 )); then
    hpc_error "${root} (mode ${mode}) may be written by others and has no sticky bit: they could rename or replace what is made there. Choose a directory of this user's, or ask an administrator for 'chmod +t ${root}'"
    return 1
  fi
  rel=${dir#"${root}"}
  IFS=/ read -ra parts <<<"${rel#/}"
  p=${root%/}
  for part in "${parts[@]}"; do
    p="${p}/${part}"
    [[ -e "${p}" || -L "${p}" ]] || mkdir -m 700 -- "${p}" 2>/dev/null
    if [[ -L "${p}" ]]; then
      hpc_error "${p} is a symbolic link (to $(readlink -- "${p}")), not a directory of this user's: someone may be redirecting it. Remove the link; it is made again, mode 700"
      return 1
    fi
    st=$(stat -c '%u %a %F' -- "${p}") || {
      hpc_error "cannot create ${p}"
      return 1
    }
    read -r a mode kind <<<"${st}"
    if [[ "${kind}" != directory ]]; then
      hpc_error "${p} is not a directory; remove it or choose another path"
      return 1
    elif [[ "${a}" != "${uid}" ]]; then
      hpc_error "${p} belongs to $(stat -c %U -- "${p}") (uid ${a}) (mode ${mode}), not to this user $(id -un) (uid ${uid}): another user made it first and could read or replace what is kept there. Remove it (ask its owner or an administrator) or choose another directory"
      return 1
    elif (( (8#${mode} & 022) != 0 )); then
      hpc_error "${p} has mode ${mode} but must be 700 (this user's alone): others may have put something in it. Remove it (it is made again, mode 700) or choose another directory"
      return 1
    elif [[ "${mode}" != 700 ]]; then
      chmod 700 -- "${p}" || return 1
    fi
  done
}

# ---------------------------------------------------------------------------------------------
# environment

## Resolves HADOOP_HOME from this file's location unless already set.
hpc_home() {
  if [[ -z "${HADOOP_HOME:-}" ]]; then
    HADOOP_HOME=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
  fi
  export HADOOP_HOME
}

## Parses the options every command accepts before its subcommand; the rest go to HPC_ARGV.
## Sets HPC_DAEMON_MODE (start|stop|status or empty), HPC_WORKERS, HPC_HOSTNAMES.
hpc_parse_args() {
  HPC_DAEMON_MODE=""
  HPC_WORKERS=false
  HPC_HOSTNAMES=""
  HPC_LOGLEVEL=""
  HPC_DEBUG=${HPC_DEBUG:-false}
  HPC_ARGV=()
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --debug)
        HPC_DEBUG=true
        shift
        ;;
      --hosts)
        [[ $# -ge 2 ]] || { hpc_error "--hosts needs a file of host names"; exit 1; }
        HADOOP_WORKERS=$2
        shift 2
        ;;
      --config)
        [[ $# -ge 2 ]] || { hpc_error "--config needs a directory"; exit 1; }
        HADOOP_CONF_DIR=$2
        shift 2
        ;;
      --daemon)
        [[ $# -ge 2 ]] || { hpc_error "--daemon needs start, stop or status"; exit 1; }
        case "$2" in
          start|stop|status) HPC_DAEMON_MODE=$2 ;;
          *) hpc_error "--daemon takes start, stop or status, not '$2'"; exit 1 ;;
        esac
        shift 2
        ;;
      --workers)
        HPC_WORKERS=true
        shift
        ;;
      --hostnames)
        [[ $# -ge 2 ]] || { hpc_error "--hostnames needs a list of hosts"; exit 1; }
        HPC_HOSTNAMES=$2
        shift 2
        ;;
      --loglevel)
        [[ $# -ge 2 ]] || { hpc_error "--loglevel needs a level (e.g. DEBUG)"; exit 1; }
        HPC_LOGLEVEL=$2
        shift 2
        ;;
      *)
        HPC_ARGV=("$@")
        break
        ;;
    esac
  done
}

## hpc_debug MESSAGE...: a "DEBUG:" line on stderr with --debug (what the script decided).
hpc_debug() {
  [[ "${HPC_DEBUG:-false}" == "true" ]] && echo "DEBUG: $*" >&2
  return 0
}

## Validates the configuration directory and reads hadoop-env.sh from it, then sets defaults;
## then sources hadoop-user-functions.sh from it, if there, to replace any hpc_* function.
hpc_load_env() {
  HADOOP_CONF_DIR=${HADOOP_CONF_DIR:-${HADOOP_HOME}/etc/hadoop}
  if [[ ! -d "${HADOOP_CONF_DIR}" ]]; then
    hpc_error "configuration directory ${HADOOP_CONF_DIR} does not exist (--config or HADOOP_CONF_DIR)"
    exit 1
  fi
  HADOOP_CONF_DIR=$(cd -P -- "${HADOOP_CONF_DIR}" && pwd -P)
  export HADOOP_CONF_DIR
  HPC_HOSTNAME=$(hostname 2>/dev/null || echo localhost)
  # This node's name: ${env.HADOOP_HPC_NODE} in the *-site.xml files names per-node directories
  # on a shared mount, and a configuration written by sbin/hpc-cluster.sh puts it in the pid,
  # log and state directories (hadoop-env.sh may use it). sbin/hpc-cluster.sh sets it to the
  # host's name in the host list; otherwise it is the host name.
  HADOOP_HPC_NODE=${HADOOP_HPC_NODE:-${HPC_HOSTNAME}}
  export HADOOP_HPC_NODE
  if [[ -f "${HADOOP_CONF_DIR}/hadoop-env.sh" ]]; then
    # shellcheck source=/dev/null
    . "${HADOOP_CONF_DIR}/hadoop-env.sh"
  fi
  # Per-tarball defaults, so two unpacked tarballs never share pid files or logs.
  HADOOP_LOG_DIR=${HADOOP_LOG_DIR:-${HADOOP_HOME}/logs}
  HADOOP_PID_DIR=${HADOOP_PID_DIR:-${HADOOP_HOME}/pids}
  HADOOP_IDENT_STRING=${HADOOP_IDENT_STRING:-${USER:-$(id -un)}}
  HADOOP_STOP_TIMEOUT=${HADOOP_STOP_TIMEOUT:-20}
  HADOOP_HPC_START_TIMEOUT=${HADOOP_HPC_START_TIMEOUT:-180}
  HADOOP_SSH_OPTS=${HADOOP_SSH_OPTS:--o BatchMode=yes -o StrictHostKeyChecking=no -o ConnectTimeout=10}
  export HADOOP_LOG_DIR HADOOP_PID_DIR HADOOP_IDENT_STRING HADOOP_STOP_TIMEOUT
  export HADOOP_HPC_START_TIMEOUT HADOOP_SSH_OPTS
  # The name (or address) this node's daemons bind and register with: ${env.HADOOP_HPC_NODE_HOST}
  # in a configuration written by sbin/hpc-cluster.sh. Only a daemon start fails without it.
  if [[ -z "${HADOOP_HPC_NODE_HOST:-}" ]]; then
    if ! HADOOP_HPC_NODE_HOST=$(hpc_node_host "${HADOOP_HPC_NODE}"); then
      [[ "${HPC_DAEMON_MODE:-}" == "start" ]] && exit 1
      HADOOP_HPC_NODE_HOST=${HADOOP_HPC_NODE}
    fi
  fi
  export HADOOP_HPC_NODE_HOST
  if [[ -f "${HADOOP_CONF_DIR}/hadoop-user-functions.sh" ]]; then
    hpc_debug "sourcing ${HADOOP_CONF_DIR}/hadoop-user-functions.sh"
    # shellcheck source=/dev/null
    . "${HADOOP_CONF_DIR}/hadoop-user-functions.sh"
  fi
  hpc_debug "HADOOP_HOME=${HADOOP_HOME} HADOOP_CONF_DIR=${HADOOP_CONF_DIR}" \
    "HADOOP_LOG_DIR=${HADOOP_LOG_DIR} HADOOP_PID_DIR=${HADOOP_PID_DIR}"
}

## hpc_node_host NODE: the name or address NODE's daemons use on the fast network. With
## HADOOP_HPC_IB_INTERFACE (e.g. ib0): that interface's IPv4 address on this host (fails, saying
## why, when it has none); with HADOOP_HPC_IB_SUFFIX (e.g. -ib): NODE plus the suffix, the IPoIB
## name most IB clusters give each node; else NODE itself.
hpc_node_host() {
  local node=$1 iface=${HADOOP_HPC_IB_INTERFACE:-} addr
  if [[ -n "${iface}" ]]; then
    addr=$(ip -4 -o addr show dev "${iface}" 2>/dev/null |
      sed -n 's|.* inet \([0-9.]*\)/.*|\1|p' | head -n 1)
    if [[ -z "${addr}" ]]; then
      hpc_error "HADOOP_HPC_IB_INTERFACE=${iface}: no IPv4 address on ${iface} on ${HPC_HOSTNAME:-$(hostname)} ('ip -4 addr show dev ${iface}')"
      return 1
    fi
    printf '%s' "${addr}"
  else
    printf '%s%s' "${node}" "${HADOOP_HPC_IB_SUFFIX:-}"
  fi
}

## Finds java in JAVA_HOME; explains how to set it when missing. Sets JAVA.
hpc_find_java() {
  if [[ -z "${JAVA_HOME:-}" ]]; then
    local hint="" j
    j=$(command -v java 2>/dev/null || true)
    if [[ -n "${j}" ]]; then
      j=$(readlink -f "${j}")
      hint=" (java on PATH is ${j}: export JAVA_HOME=${j%/bin/java})"
    fi
    hpc_error "JAVA_HOME is not set. Set it in ${HADOOP_CONF_DIR}/hadoop-env.sh or the environment${hint}"
    exit 1
  fi
  JAVA="${JAVA_HOME}/bin/java"
  if [[ ! -x "${JAVA}" ]]; then
    hpc_error "JAVA_HOME=${JAVA_HOME} has no bin/java; point JAVA_HOME at a Java 17 (or newer) installation"
    exit 1
  fi
  local release="${JAVA_HOME}/release" version=""
  if [[ -f "${release}" ]]; then
    version=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "${release}")
    if [[ -n "${version}" && "${version}" -lt 17 ]]; then
      hpc_error "JAVA_HOME=${JAVA_HOME} is Java ${version}; hadoop-hpc needs Java 17 or newer"
      exit 1
    fi
  fi
  export JAVA_HOME
}

## The classpath of every JVM we start: conf, our jars, Hadoop's jars, the HDFS web apps.
hpc_classpath() {
  local cp="${HADOOP_CONF_DIR}:${HADOOP_HOME}/share/hadoop-hpc/*:${HADOOP_HOME}/share/hadoop/lib/*"
  cp="${cp}:${HADOOP_HOME}/share/hadoop/hdfs"
  if [[ -n "${HADOOP_CLASSPATH:-}" ]]; then
    if [[ "${HADOOP_USER_CLASSPATH_FIRST:-}" == "true" ]]; then
      cp="${HADOOP_CLASSPATH}:${cp}"
    else
      cp="${cp}:${HADOOP_CLASSPATH}"
    fi
  fi
  printf '%s' "${cp}"
}

## Upper-cases and maps '-' to '_': "namenode" -> "NAMENODE".
hpc_upper() {
  local s=${1^^}
  printf '%s' "${s//-/_}"
}

## Builds HPC_JAVA_OPTS for PROGRAM SUBCMD; DAEMON=true logs to a file instead of the console;
## CLIENT=true (a command, not a daemon) adds HADOOP_CLIENT_OPTS, as Apache Hadoop does.
hpc_java_opts() {
  local program=$1 subcmd=$2 daemon=$3 client=${4:-false}
  local logfile="hadoop-${HADOOP_IDENT_STRING}-${subcmd}-${HPC_HOSTNAME}.log"
  local root_logger=${HADOOP_ROOT_LOGGER:-INFO,console}
  if [[ "${daemon}" == "true" ]]; then
    root_logger=${HADOOP_DAEMON_ROOT_LOGGER:-INFO,RFA}
  fi
  if [[ -n "${HPC_LOGLEVEL}" ]]; then
    root_logger="${HPC_LOGLEVEL},${root_logger#*,}"
  fi
  HPC_JAVA_OPTS=(
    "-Dproc_${subcmd}"
    "-Dhadoop.home.dir=${HADOOP_HOME}"
    "-Dhadoop.log.dir=${HADOOP_LOG_DIR}"
    "-Dyarn.log.dir=${HADOOP_LOG_DIR}"
    "-Dhadoop.log.file=${logfile}"
    "-Dyarn.log.file=${logfile}"
    "-Dhadoop.id.str=${HADOOP_IDENT_STRING}"
    "-Dhadoop.root.logger=${root_logger}"
    "-Djava.library.path=${HADOOP_HOME}/lib/native"
    "-Djava.net.preferIPv4Stack=true"
  )
  if [[ "${daemon}" == "true" ]]; then
    # How status and stop find this daemon's JVM (and only it) in /proc.
    HPC_JAVA_OPTS+=("-Dhadoop.hpc.daemon=${subcmd}@${HADOOP_PID_DIR}")
  fi
  if [[ -n "${HADOOP_HEAPSIZE_MIN:-}" ]]; then
    HPC_JAVA_OPTS+=("-Xms$(hpc_heap_size "${HADOOP_HEAPSIZE_MIN}")")
  fi
  if [[ -n "${HADOOP_HEAPSIZE_MAX:-}" ]]; then
    HPC_JAVA_OPTS+=("-Xmx$(hpc_heap_size "${HADOOP_HEAPSIZE_MAX}")")
  fi
  # Word splitting is intended: *_OPTS hold several JVM options, as in Apache Hadoop.
  local var extra
  var="$(hpc_upper "${program}")_$(hpc_upper "${subcmd}")_OPTS"
  # shellcheck disable=SC2206
  extra=(${HADOOP_OPTS:-})
  if [[ "${client}" == "true" ]]; then
    # shellcheck disable=SC2206
    extra+=(${HADOOP_CLIENT_OPTS:-})
  fi
  # shellcheck disable=SC2206
  extra+=(${!var:-})
  HPC_JAVA_OPTS+=("${extra[@]}")
}

## hpc_heap_size SIZE: a heap size as Apache Hadoop reads HADOOP_HEAPSIZE_MIN/MAX: a plain
## number is megabytes (4096 -> 4096m), a number with a unit is kept (4g).
hpc_heap_size() {
  if [[ "$1" =~ ^[0-9]+$ ]]; then
    printf '%sm' "$1"
  else
    printf '%s' "$1"
  fi
}

## Runs the command CLASS in the foreground (replacing this shell).
hpc_java_exec() {
  local program=$1 subcmd=$2 class=$3
  shift 3
  hpc_java_opts "${program}" "${subcmd}" false true
  hpc_debug "classpath: $(hpc_classpath)"
  hpc_debug "final command: ${JAVA} ${HPC_JAVA_OPTS[*]} ${class} $*"
  exec "${JAVA}" "${HPC_JAVA_OPTS[@]}" -cp "$(hpc_classpath)" "${class}" "$@"
}

## Runs a hadoop-hpc tool class and returns its exit code (does not exec).
hpc_java_run() {
  local class=$1
  shift
  # Bounded: a JVM that hangs (a stuck file system under the classpath, a frozen host) must not
  # hang the script; `timeout` ends it with 124 (137 if it ignores TERM for 5 s more).
  timeout -k 5 "${HPC_JAVA_RUN_TIMEOUT:-120}" \
    "${JAVA}" "-Dhadoop.root.logger=WARN,console" "-Dhadoop.home.dir=${HADOOP_HOME}" \
    "-Djava.library.path=${HADOOP_HOME}/lib/native" \
    -cp "$(hpc_classpath)" "${class}" "$@"
}

## hpc_java_status RC: how a hpc_java_run JVM ended, in words ("exited N", or the time limit).
hpc_java_status() {
  case "$1" in
    124) printf 'did not finish within %s s (HPC_JAVA_RUN_TIMEOUT) and was stopped' "${HPC_JAVA_RUN_TIMEOUT:-120}" ;;
    *) printf 'exited %s' "$1" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# daemons

hpc_pid_file() {
  printf '%s' "${HADOOP_PID_DIR}/hadoop-${HADOOP_IDENT_STRING}-$1.pid"
}

hpc_log_file() {
  printf '%s' "${HADOOP_LOG_DIR}/hadoop-${HADOOP_IDENT_STRING}-$1-${HPC_HOSTNAME}.log"
}

hpc_out_file() {
  printf '%s' "${HADOOP_LOG_DIR}/hadoop-${HADOOP_IDENT_STRING}-$1-${HPC_HOSTNAME}.out"
}

## Prints the pid of SUBCMD's daemon if it is alive, else returns 1.
hpc_daemon_pid() {
  local pidfile pid
  pidfile=$(hpc_pid_file "$1")
  [[ -f "${pidfile}" ]] || return 1
  pid=$(<"${pidfile}")
  [[ "${pid}" =~ ^[0-9]+$ ]] || return 1
  # The pid must still be our JVM, not a recycled number.
  if [[ -r "/proc/${pid}/cmdline" ]] &&
     tr '\0' '\n' 2>/dev/null <"/proc/${pid}/cmdline" |
       grep -qxF -- "-Dhadoop.hpc.daemon=$1@${HADOOP_PID_DIR}"; then
    printf '%s' "${pid}"
    return 0
  fi
  return 1
}

## Every live JVM of SUBCMD that belongs to this pid dir, found by its marker (no pgrep needed).
hpc_daemon_strays() {
  local marker="-Dhadoop.hpc.daemon=$1@${HADOOP_PID_DIR}" f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    if tr '\0' '\n' 2>/dev/null <"${f}" | grep -qxF -- "${marker}"; then
      printf '%s\n' "${pid}"
    fi
  done
}

## Why a daemon died, from its log: a port clash, an unformatted NameNode, or the log's tail.
hpc_explain_failure() {
  local subcmd=$1 log out addr
  log=$(hpc_log_file "${subcmd}")
  out=$(hpc_out_file "${subcmd}")
  local files=()
  [[ -f "${log}" ]] && files+=("${log}")
  [[ -f "${out}" ]] && files+=("${out}")
  if [[ ${#files[@]} -eq 0 ]]; then
    hpc_error "${subcmd} exited during start-up and wrote no log under ${HADOOP_LOG_DIR}"
    return
  fi
  if grep -qE 'BindException|Address already in use|Port in use' "${files[@]}"; then
    addr=$(grep -ohE 'Problem binding to \[[^]]*\]|Port in use: [^ ]*' "${files[@]}" | head -n 1 |
      sed -e 's/Problem binding to \[\(.*\)\]/\1/' -e 's/Port in use: //')
    hpc_error "${subcmd} failed to start: port ${addr:-(see log)} is already in use (another cluster running?). Log: ${log}"
  elif grep -qE 'NameNode is not formatted|storage directory does not exist or is not accessible' "${files[@]}"; then
    hpc_error "${subcmd} failed to start: the NameNode is not formatted; run '${HADOOP_HOME}/bin/hdfs namenode -format' first. Log: ${log}"
  elif grep -q 'DataNode not started: ' "${files[@]}"; then
    # hadoop-hpc's DataNode refused its HHH mode: its one line names the key to fix.
    hpc_error "${subcmd} failed to start: $(grep -oh 'DataNode not started: .*' "${files[@]}" |
      head -n 1 | sed 's/^DataNode not started: //'). Log: ${log}"
  elif grep -q 'Incompatible clusterIDs' "${files[@]}"; then
    hpc_error "${subcmd} failed to start: its storage belongs to another NameNode format (Incompatible clusterIDs); empty dfs.datanode.data.dir or reformat. Log: ${log}"
  else
    hpc_error "${subcmd} exited during start-up. Last lines of ${log}:"
    tail -n 15 "${files[@]}" >&2
  fi
}

## --daemon start: port check, launch in the background, pid file, early-death check.
hpc_daemon_start() {
  local program=$1 subcmd=$2 class=$3
  shift 3
  local pid pidfile out
  if pid=$(hpc_daemon_pid "${subcmd}"); then
    hpc_error "${subcmd} is already running as process ${pid}; stop it first (${program} --daemon stop ${subcmd})"
    return 1
  fi
  mkdir -p "${HADOOP_LOG_DIR}" "${HADOOP_PID_DIR}" || {
    hpc_error "cannot create HADOOP_LOG_DIR=${HADOOP_LOG_DIR} or HADOOP_PID_DIR=${HADOOP_PID_DIR}"
    return 1
  }
  if [[ "${HADOOP_HPC_PORT_CHECK:-true}" == "true" ]]; then
    # A clash is named (port, key, daemon) before anything starts.
    hpc_java_run org.hadoophpc.tools.DaemonCheck ports "${subcmd}" || return 1
  fi
  pidfile=$(hpc_pid_file "${subcmd}")
  out=$(hpc_out_file "${subcmd}")
  hpc_java_opts "${program}" "${subcmd}" true
  # Keep the previous run's log (nothing is lost) but start a fresh one, so a failure is
  # explained from this run only.
  local log
  log=$(hpc_log_file "${subcmd}")
  [[ -f "${log}" ]] && mv -f "${log}" "${log}.prev"
  [[ -f "${out}" ]] && mv -f "${out}" "${out}.prev"
  hpc_debug "daemon command: ${JAVA} ${HPC_JAVA_OPTS[*]} -cp $(hpc_classpath) ${class} $*"
  nohup "${JAVA}" "${HPC_JAVA_OPTS[@]}" -cp "$(hpc_classpath)" "${class}" "$@" \
    >"${out}" 2>&1 </dev/null &
  pid=$!
  echo "${pid}" >"${pidfile}"
  # A JVM that cannot even start (bad option, missing class) dies within a second.
  sleep 1
  if ! kill -0 "${pid}" 2>/dev/null; then
    rm -f "${pidfile}"
    hpc_explain_failure "${subcmd}"
    return 1
  fi
  hpc_info "started ${subcmd} on ${HPC_HOSTNAME} (pid ${pid}), logging to $(hpc_log_file "${subcmd}")"
}

## --daemon stop: TERM, wait HADOOP_STOP_TIMEOUT seconds, then KILL; strays too.
hpc_daemon_stop() {
  local subcmd=$1 pids pid i alive
  pids=$(hpc_daemon_strays "${subcmd}")
  if [[ -z "${pids}" ]]; then
    hpc_info "no ${subcmd} to stop on ${HPC_HOSTNAME}"
    rm -f "$(hpc_pid_file "${subcmd}")"
    return 0
  fi
  for pid in ${pids}; do
    kill -TERM "${pid}" 2>/dev/null || true
  done
  for ((i = 0; i < HADOOP_STOP_TIMEOUT * 5; i++)); do
    alive=""
    for pid in ${pids}; do
      kill -0 "${pid}" 2>/dev/null && alive="${alive} ${pid}"
    done
    [[ -z "${alive}" ]] && break
    sleep 0.2
  done
  for pid in ${alive}; do
    hpc_warn "${subcmd} (pid ${pid}) did not stop within ${HADOOP_STOP_TIMEOUT}s; killing it"
    kill -KILL "${pid}" 2>/dev/null || true
  done
  rm -f "$(hpc_pid_file "${subcmd}")"
  hpc_info "stopped ${subcmd} on ${HPC_HOSTNAME}"
}

## --daemon status, LSB codes: 0 running, 1 dead with a pid file, 3 not running.
hpc_daemon_status() {
  local subcmd=$1 pid
  if pid=$(hpc_daemon_pid "${subcmd}"); then
    hpc_info "${subcmd} is running as process ${pid}"
    return 0
  fi
  if [[ -f "$(hpc_pid_file "${subcmd}")" ]]; then
    hpc_info "${subcmd} is not running, but its pid file $(hpc_pid_file "${subcmd}") exists"
    return 1
  fi
  hpc_info "${subcmd} is not running"
  return 3
}

## Entry for a daemon subcommand: honours --daemon and --workers, else runs in the foreground.
hpc_run_daemon() {
  local program=$1 subcmd=$2 class=$3
  shift 3
  case "${HPC_DAEMON_MODE}" in
    start) hpc_daemon_start "${program}" "${subcmd}" "${class}" "$@" ;;
    stop) hpc_daemon_stop "${subcmd}" ;;
    status) hpc_daemon_status "${subcmd}" ;;
    *) # a daemon in the foreground: no HADOOP_CLIENT_OPTS
      hpc_java_opts "${program}" "${subcmd}" false false
      exec "${JAVA}" "${HPC_JAVA_OPTS[@]}" -cp "$(hpc_classpath)" "${class}" "$@" ;;
  esac
}

# ---------------------------------------------------------------------------------------------
# hosts

## Is HOST this machine? (then no ssh is needed)
hpc_is_local_host() {
  case "$1" in
    localhost|127.*|::1|0.0.0.0|"${HPC_HOSTNAME}"|"$(hostname -f 2>/dev/null)") return 0 ;;
  esac
  local ip
  for ip in $(hostname -I 2>/dev/null); do
    [[ "$1" == "${ip}" ]] && return 0
  done
  return 1
}

## The hosts of the workers file, comments and blank lines dropped.
hpc_workers() {
  if [[ -n "${HADOOP_WORKER_NAMES:-}" ]]; then
    tr -s '[:space:],' '\n' <<<"${HADOOP_WORKER_NAMES}" | sed '/^$/d'
    return 0
  fi
  local file=${HADOOP_WORKERS:-${HADOOP_CONF_DIR}/workers}
  if [[ ! -f "${file}" ]]; then
    hpc_error "no workers file ${file}; list one worker host per line (localhost for one machine)"
    return 1
  fi
  sed -e 's/#.*//' -e 's/[[:space:]]//g' -e '/^$/d' "${file}"
}

## Is HOST a name of the loopback interface? (a workers file of one machine says localhost)
hpc_is_loopback() {
  case "$1" in
    localhost|127.*|::1) return 0 ;;
  esac
  return 1
}

## hpc_on_host HOST COMMAND...: runs COMMAND for HOST: here when HOST is this machine, else over
## ssh (HADOOP_SSH_OPTS; exit code 255 when ssh cannot reach it). The command sees
## HADOOP_HPC_NODE=HOST (unless HOST is a loopback name), so per-host directories follow the
## host list even where `hostname` says something else.
hpc_on_host() {
  local host=$1
  shift
  local node=()
  hpc_valid_host "${host}" || { hpc_error "not a host name: '${host}'"; return 255; }
  hpc_is_loopback "${host}" || node=(env "HADOOP_HPC_NODE=${host}")
  if hpc_is_local_host "${host}"; then
    "${node[@]}" "$@"
  else
    # shellcheck disable=SC2086  # HADOOP_SSH_OPTS holds several ssh options
    ssh ${HADOOP_SSH_OPTS:-} "${host}" -- "$(printf '%q ' "${node[@]}" "$@")"
  fi
}

## hpc_fanout OUTDIR HOSTS COMMAND...: runs COMMAND for each of HOSTS (space separated) with
## hpc_on_host, at most HADOOP_SSH_PARALLEL (default 10) at a time, so a large allocation does
## not open hundreds of ssh sessions at once. Each host's output goes to OUTDIR/HOST.out, its
## exit code to OUTDIR/HOST.rc. A host that fails or hangs holds one slot and nothing else.
hpc_fanout() {
  local outdir=$1 hosts=$2
  shift 2
  local max=${HADOOP_SSH_PARALLEL:-10} running=0 host
  if [[ ! "${max}" =~ ^[1-9][0-9]*$ ]]; then
    hpc_error "HADOOP_SSH_PARALLEL=${max} is not a positive number"
    return 1
  fi
  for host in ${hosts}; do
    if ((running >= max)); then
      wait -n
      running=$((running - 1))
    fi
    {
      hpc_on_host "${host}" "$@" >"${outdir}/${host}.out" 2>&1 </dev/null
      echo "$?" >"${outdir}/${host}.rc"
    } &
    running=$((running + 1))
  done
  wait
}

## Runs COMMAND... on each of HOSTS (space separated), hpc_fanout's way. Output of remote hosts
## is prefixed with the host name. Fails if any host failed.
hpc_on_hosts() {
  local hosts=$1
  shift
  local dir host rc=0
  dir=$(mktemp -d) || return 1
  hpc_fanout "${dir}" "${hosts}" "$@" || rc=1
  for host in ${hosts}; do
    if hpc_is_local_host "${host}"; then
      cat "${dir}/${host}.out"
    else
      sed "s/^/${host}: /" "${dir}/${host}.out"
    fi
    [[ "$(cat "${dir}/${host}.rc" 2>/dev/null)" == "0" ]] || rc=1
  done
  rm -rf "${dir}"
  return "${rc}"
}

# ---------------------------------------------------------------------------------------------
# cluster configuration (sbin/hpc-cluster.sh)

## hpc_valid_host NAME: true when NAME can only be a host (a DNS name or an IPv4/IPv6 address):
## letters, digits, '.', '-', '_', ':', not starting with '-', so that it never becomes an option
## of ssh or of any command it is given to.
hpc_valid_host() {
  [[ "$1" =~ ^[A-Za-z0-9_:][A-Za-z0-9._:-]*$ ]]
}

## hpc_host_list FILE: the hosts of the job, one per line, duplicates dropped, order kept: from
## FILE if given (one host per line, '#' comments; a PBS node file or `host slots=N` lines work
## too), else Slurm's SLURM_JOB_NODELIST expanded by `scontrol show hostnames`, else PBS's
## PBS_NODEFILE (one line per core). Says where it took them from in HPC_HOSTS_SOURCE.
hpc_host_list() {
  local file=${1:-} list
  if [[ -n "${file}" ]]; then
    [[ -r "${file}" ]] || { hpc_error "--hosts ${file}: no such readable file"; return 1; }
    HPC_HOSTS_SOURCE="${file}"
  elif [[ -n "${SLURM_JOB_NODELIST:-}" ]]; then
    command -v scontrol >/dev/null 2>&1 || {
      hpc_error "SLURM_JOB_NODELIST=${SLURM_JOB_NODELIST} is set but scontrol is not on PATH (or pass --hosts FILE)"
      return 1
    }
    list=$(scontrol show hostnames "${SLURM_JOB_NODELIST}") || {
      hpc_error "scontrol show hostnames ${SLURM_JOB_NODELIST} failed"
      return 1
    }
    HPC_HOSTS_SOURCE="SLURM_JOB_NODELIST=${SLURM_JOB_NODELIST}"
  elif [[ -n "${PBS_NODEFILE:-}" ]]; then
    [[ -r "${PBS_NODEFILE}" ]] || { hpc_error "PBS_NODEFILE=${PBS_NODEFILE} is not readable"; return 1; }
    file=${PBS_NODEFILE}
    HPC_HOSTS_SOURCE="PBS_NODEFILE=${PBS_NODEFILE}"
  else
    hpc_error "no host list: pass --hosts FILE, or run inside a Slurm (SLURM_JOB_NODELIST) or PBS (PBS_NODEFILE) job"
    return 1
  fi
  if [[ -n "${file}" ]]; then
    list=$(cat "${file}")
  fi
  # shellcheck disable=SC2034  # read by the caller
  HPC_HOSTS=$(awk '{ sub(/#.*/, "") } NF { if (!seen[$1]++) print $1 }' <<<"${list}")
  if [[ -z "${HPC_HOSTS}" ]]; then
    hpc_error "the host list (${HPC_HOSTS_SOURCE}) is empty"
    return 1
  fi
  local host
  for host in ${HPC_HOSTS}; do
    if ! hpc_valid_host "${host}"; then
      hpc_error "the host list (${HPC_HOSTS_SOURCE}) holds '${host}', which is not a host name (letters, digits, '.', '-', '_', ':'; not starting with '-')"
      return 1
    fi
  done
}

## hpc_min_workers SPEC TOTAL: how many of TOTAL workers must be live for SPEC (N, or P% rounded
## up); fails naming the problem when SPEC is malformed or more than TOTAL.
hpc_min_workers() {
  local spec=$1 total=$2 need
  if [[ "${spec}" =~ ^([0-9]+)%$ ]]; then
    need=$(((BASH_REMATCH[1] * total + 99) / 100))
    ((BASH_REMATCH[1] <= 100)) || { hpc_error "--min-workers ${spec}: more than 100%"; return 1; }
  elif [[ "${spec}" =~ ^[0-9]+$ ]]; then
    need=${spec}
  else
    hpc_error "--min-workers ${spec}: give a number of workers (e.g. 8) or a share (e.g. 90%)"
    return 1
  fi
  if ((need > total)); then
    hpc_error "--min-workers ${spec}: needs ${need} live workers, but there are only ${total}"
    return 1
  fi
  ((need >= 1)) || need=1
  printf '%s' "${need}"
}

## hpc_xml_escape TEXT: TEXT with &, < and > escaped for an XML value.
hpc_xml_escape() {
  local s=${1//&/&amp;}
  s=${s//</&lt;}
  printf '%s' "${s//>/&gt;}"
}

## hpc_conf_merge BASE OVERLAY: prints the Hadoop configuration file BASE with the properties of
## OVERLAY merged in: a property of OVERLAY replaces BASE's property of the same name where it
## stands (comments of the overlay's property go with it), the others are added at the end, in
## OVERLAY's order. Lists of plugins (names ending in ".plugins", e.g. dfs.datanode.plugins)
## are joined instead: BASE's classes, then the overlay's not already there. Everything else of
## BASE is kept as it is.
hpc_conf_merge() {
  awk '
    function prop_name(block,   m) {
      if (match(block, /<name>[^<]*<\/name>/)) {
        m = substr(block, RSTART + 6, RLENGTH - 13)
        gsub(/^[ \t\n]+|[ \t\n]+$/, "", m)
        return m
      }
      return ""
    }
    function prop_value(block,   m) {
      if (match(block, /<value>[^<]*<\/value>/)) return substr(block, RSTART + 7, RLENGTH - 15)
      return ""
    }
    # the comma-separated classes of first, then those of second not in first
    function joined(first, second,   parts, seen, n, i, c, out) {
      out = ""
      n = split(first "," second, parts, ",")
      for (i = 1; i <= n; i++) {
        c = parts[i]
        gsub(/^[ \t\n]+|[ \t\n]+$/, "", c)
        if (c != "" && !(c in seen)) { seen[c] = 1; out = out (out == "" ? "" : ",") c }
      }
      return out
    }
    FNR == 1 { part++ }
    part == 1 {
      if ($0 ~ /<property[ >]/) { inprop = 1; block = "" }
      if (inprop) {
        block = block $0 "\n"
        if ($0 ~ /<\/property>/) {
          inprop = 0
          name = prop_name(block)
          if (!(name in over)) order[++n] = name
          over[name] = block
        }
      }
      next
    }
    {
      if (!inprop && $0 ~ /<property[ >]/) { inprop = 1; block = "" }
      if (inprop) {
        block = block $0 "\n"
        if ($0 ~ /<\/property>/) {
          inprop = 0
          name = prop_name(block)
          if (name in over) {
            merged = over[name]
            if (name ~ /\.plugins$/) {
              v = joined(prop_value(block), prop_value(merged))
              sub(/<value>[^<]*<\/value>/, "<value>" v "</value>", merged)
            }
            printf "%s", merged
            used[name] = 1
          }
          else printf "%s", block
        }
        next
      }
      if ($0 ~ /<\/configuration>/) {
        for (i = 1; i <= n; i++) if (!(order[i] in used)) printf "%s", over[order[i]]
      }
      print
    }
  ' "$2" "$1"
}

# ---------------------------------------------------------------------------------------------
# configuration and readiness

## Reads KEYs in one JVM into the associative array HPC_CONF. A JVM that dies without printing
## them (a crash report goes to stdout, an OOM kill prints nothing) is tried once more with a
## WARNING; a second failure exits with the JVM's own words: a script must never go on with an
## empty configuration.
hpc_conf_load() {
  local attempt
  for attempt in 1 2; do
    hpc_conf_try_load "$@" && return 0
    if [[ ${attempt} -eq 1 ]]; then
      hpc_warn "reading ${*} from ${HADOOP_CONF_DIR} failed once:" \
        "${JAVA} $(hpc_java_status "${HPC_CONF_RC}") (MemAvailable $(hpc_mem_available_mb) MB); trying again"
      [[ -n "${HPC_CONF_OUT}" ]] && head -n 20 <<<"${HPC_CONF_OUT}" | hpc_quote >&2
    fi
  done
  hpc_error "cannot read ${*} from the configuration in ${HADOOP_CONF_DIR}:" \
    "${JAVA} $(hpc_java_status "${HPC_CONF_RC}")${HPC_CONF_OUT:+ and printed:}"
  [[ -n "${HPC_CONF_OUT}" ]] && hpc_quote <<<"${HPC_CONF_OUT}" >&2
  hpc_error "MemAvailable $(hpc_mem_available_mb) MB; check JAVA_HOME and the files in" \
    "${HADOOP_CONF_DIR}, then run the command again"
  exit 1
}

## One try of hpc_conf_load: fills HPC_CONF, HPC_CONF_RC and HPC_CONF_OUT (the JVM's stdout);
## fails unless the JVM exited 0 with a KEY= line for every key.
hpc_conf_try_load() {
  declare -gA HPC_CONF=()
  local line key
  HPC_CONF_RC=0
  HPC_CONF_OUT=$(hpc_java_run org.hadoophpc.tools.DaemonCheck get "$@") || HPC_CONF_RC=$?
  while IFS= read -r line; do
    [[ -n "${line}" ]] || continue
    # shellcheck disable=SC2034  # read by the sourcing script
    HPC_CONF["${line%%=*}"]=${line#*=}
  done <<<"${HPC_CONF_OUT}"
  [[ ${HPC_CONF_RC} -eq 0 ]] || return 1
  for key in "$@"; do
    [[ -v "HPC_CONF[${key}]" ]] || return 1
  done
}

## Quotes stdin line by line ("  | LINE"): another program's words inside ours.
hpc_quote() {
  local line
  while IFS= read -r line; do
    printf '  | %s\n' "${line}"
  done
}

## MemAvailable of this host in MB ("?" where /proc/meminfo has none).
hpc_mem_available_mb() {
  awk '/^MemAvailable:/ { printf "%d", $2 / 1024; found = 1 } END { if (!found) printf "?" }' \
    /proc/meminfo 2>/dev/null || printf '?'
}

## hpc_uses_hdfs: true when fs.defaultFS is hdfs:// (false: no HDFS to start or stop, as in the
## MapReduce over Lustre modes); exits when the configuration cannot be read.
hpc_uses_hdfs() {
  hpc_conf_load fs.defaultFS
  if [[ -z "${HPC_CONF[fs.defaultFS]:-}" ]]; then
    hpc_error "cannot read fs.defaultFS from ${HADOOP_CONF_DIR} (see above)"
    exit 1
  fi
  [[ "${HPC_CONF[fs.defaultFS]}" == hdfs://* ]]
}

## host:port -> host (host part of an address)
hpc_addr_host() {
  printf '%s' "${1%:*}"
}

## HTTP GET http://HOST:PORT/PATH with bash's /dev/tcp; prints the body (no curl needed).
hpc_http_get() {
  local host=$1 port=$2 path=$3 resp
  [[ "${host}" == "0.0.0.0" ]] && host=127.0.0.1
  # shellcheck disable=SC2016  # expanded by the inner bash
  resp=$(timeout 5 bash -c '
    exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" "$2" "$0" >&3
    cat <&3' "${host}" "${port}" "${path}" 2>/dev/null) || return 1
  printf '%s' "${resp#*$'\r\n\r\n'}"
}

## The number in a JSON field "NAME" : 123 of a JMX answer (first match).
hpc_json_number() {
  sed -n "s/.*\"$1\" *: *\([0-9][0-9]*\).*/\1/p" | head -n 1
}

## Pid of the JVM answering JMX at HOST:PORT (its Runtime name is "pid@host").
hpc_jmx_pid() {
  hpc_http_get "$1" "$2" "/jmx?qry=java.lang:type=Runtime" |
    sed -n 's/.*"Name" *: *"\([0-9][0-9]*\)@.*/\1/p' | head -n 1
}

## Fails with the daemon's own explanation if a local daemon we started has died.
hpc_check_alive() {
  local subcmd
  for subcmd in "$@"; do
    if ! hpc_daemon_pid "${subcmd}" >/dev/null; then
      hpc_explain_failure "${subcmd}"
      return 1
    fi
  done
}

# ---------------------------------------------------------------------------------------------
# command entry

## Common start of bin/hadoop, bin/hdfs, bin/yarn, bin/mapred: parse, environment, java.
## With --workers, re-runs the same command on every worker host and exits.
hpc_main() {
  local program=$1
  shift
  HPC_PROGRAM=${program}
  hpc_home
  hpc_parse_args "$@"
  hpc_load_env
  if [[ "${HPC_WORKERS}" == "true" || -n "${HPC_HOSTNAMES}" ]]; then
    local hosts=${HPC_HOSTNAMES} again=()
    [[ -n "${hosts}" ]] || hosts=$(hpc_workers) || exit 1
    [[ -n "${HPC_DAEMON_MODE}" ]] && again=(--daemon "${HPC_DAEMON_MODE}")
    hpc_on_hosts "${hosts}" "${HADOOP_HOME}/bin/${program}" --config "${HADOOP_CONF_DIR}" \
      "${again[@]}" "${HPC_ARGV[@]}"
    exit $?
  fi
  hpc_find_java
}

## hpc_deprecated_daemon PROGRAM SCRIPT [--config DIR] (start|stop|status) COMMAND [ARGS...]:
## what the Hadoop 2 scripts hadoop-daemon.sh, yarn-daemon.sh and mr-jobhistory-daemon.sh do
## in Apache Hadoop 3: one deprecation warning, then bin/PROGRAM --daemon ACTION COMMAND ARGS
## (its exit code). A usage error exits 1.
hpc_deprecated_daemon() {
  local program=$1 script=$2 config=() action
  shift 2
  hpc_home
  if [[ "${1:-}" == "--config" ]]; then
    [[ $# -ge 2 ]] || { hpc_error "--config needs a directory"; exit 1; }
    config=(--config "$2")
    shift 2
  fi
  action=${1:-}
  if [[ $# -lt 2 || ! "${action}" =~ ^(start|stop|status)$ ]]; then
    hpc_error "usage: ${script} [--config confdir] (start|stop|status) <${program}-command> [args...]"
    exit 1
  fi
  shift
  echo "WARNING: ${script} is deprecated; running \"${program} --daemon ${action} $1\" instead." >&2
  exec "${HADOOP_HOME}/bin/${program}" "${config[@]}" --daemon "${action}" "$@"
}

## hpc_balancer start|stop [--config DIR] [BALANCER OPTIONS...]: sbin/start-balancer.sh and
## stop-balancer.sh: the balancer as a daemon of this host (bin/hdfs --daemon ACTION balancer).
hpc_balancer() {
  local action=$1 config=()
  shift
  hpc_home
  if [[ "${1:-}" == "--config" ]]; then
    [[ $# -ge 2 ]] || { hpc_error "--config needs a directory"; exit 1; }
    config=(--config "$2")
    shift 2
  fi
  [[ "${action}" == "stop" ]] && set --
  exec "${HADOOP_HOME}/bin/hdfs" "${config[@]}" --daemon "${action}" balancer "$@"
}

## Subcommands every program has. Returns 1 if SUBCMD is not one of them.
hpc_common_subcommand() {
  local subcmd=$1
  shift
  case "${subcmd}" in
    classpath)
      if [[ "${1:-}" == "--glob" || $# -eq 0 ]]; then
        hpc_classpath
        echo
      else
        hpc_java_exec "${HPC_PROGRAM}" classpath org.apache.hadoop.util.Classpath "$@"
      fi
      exit 0
      ;;
    version)
      cat "${HADOOP_HOME}/libexec/VERSION"
      hpc_java_exec "${HPC_PROGRAM}" version org.apache.hadoop.util.VersionInfo "$@"
      ;;
    envvars)
      echo "JAVA_HOME='${JAVA_HOME}'"
      echo "HADOOP_HOME='${HADOOP_HOME}'"
      echo "HADOOP_CONF_DIR='${HADOOP_CONF_DIR}'"
      echo "HADOOP_LOG_DIR='${HADOOP_LOG_DIR}'"
      echo "HADOOP_PID_DIR='${HADOOP_PID_DIR}'"
      echo "HADOOP_TOOLS_LIB_JARS_DIR='${HADOOP_HOME}/share/hadoop/mapreduce'"
      echo "HADOOP_HPC_NATIVE_DIR='${HADOOP_HOME}/lib/native'"
      exit 0
      ;;
    checknative)
      hpc_java_exec "${HPC_PROGRAM}" checknative org.hadoophpc.nativeio.CheckNative "$@"
      ;;
    jar)
      if [[ $# -lt 1 ]]; then
        hpc_error "usage: ${HPC_PROGRAM} jar <jar> [mainClass] args..."
        exit 1
      fi
      hpc_java_exec "${HPC_PROGRAM}" jar org.apache.hadoop.util.RunJar "$@"
      ;;
    *.*)
      # a fully qualified class name, as Hadoop's scripts allow
      hpc_java_exec "${HPC_PROGRAM}" "${subcmd##*.}" "${subcmd}" "$@"
      ;;
    *)
      return 1
      ;;
  esac
}

## Usage text and exit code 1 for an unknown subcommand.
hpc_usage() {
  local text=$1 subcmd=${2:-}
  [[ -n "${subcmd}" ]] && hpc_error "unknown subcommand '${subcmd}'"
  echo "Usage: ${HPC_PROGRAM} [--config confdir] [--loglevel level] [--daemon (start|stop|status)] [--workers] [--hostnames \"h1 h2\"] subcommand [options]" >&2
  printf '%s\n' "${text}" >&2
  echo "  classpath | version | envvars | checknative | jar <jar> | CLASSNAME" >&2
  exit 1
}

## Common start of sbin scripts: HADOOP_HOME, options, environment, java.
hpc_script_init() {
  hpc_home
  hpc_parse_args "$@"
  hpc_load_env
  hpc_find_java
}

## hpc_wait_ready WHAT PROBE DAEMON...: runs the function PROBE every second until it returns 0,
## printing progress every 10 s. PROBE describes the state in HPC_STATE. Fails (HPC_WAIT_ERROR
## says why) when a local DAEMON dies, explained from its log, or after HADOOP_HPC_START_TIMEOUT.
# shellcheck disable=SC2034  # HPC_WAIT_ERROR and HPC_STATE are read by the caller
hpc_wait_ready() {
  local what=$1 probe=$2
  shift 2
  local begin=${SECONDS} next=$((SECONDS + 10))
  while true; do
    if ! hpc_check_alive "$@"; then
      HPC_WAIT_ERROR="${what} not started"
      return 1
    fi
    HPC_STATE=""
    if "${probe}"; then
      echo "${what} ready in $((SECONDS - begin))s: ${HPC_STATE}"
      return 0
    fi
    if ((SECONDS - begin >= HADOOP_HPC_START_TIMEOUT)); then
      HPC_WAIT_ERROR="${what} not ready after ${HADOOP_HPC_START_TIMEOUT}s (${HPC_STATE})"
      return 1
    fi
    if ((SECONDS >= next)); then
      echo "  ... $((SECONDS - begin))s: ${HPC_STATE}"
      next=$((SECONDS + 10))
    fi
    sleep 1
  done
}

# Kerberos for per-job clusters (hpc-cluster.sh configure --secure).
# shellcheck source=hpc-security.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/hpc-security.sh"
