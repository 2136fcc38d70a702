#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# hpc-cluster.sh: a hadoop-hpc cluster on the hosts of a job, from one install on a shared file
# system, with a configuration directory of its own.
#
#   hpc-cluster.sh configure --conf-dir DIR [--hosts FILE] [--mode MODE[,MODE...]]
#       [--master HOST] [--local-dir DIR] [--log-dir DIR] [--ib-suffix SUFFIX | --ib-interface IF]
#       [--min-workers N|P%] [--base DIR] [--secure]
#   hpc-cluster.sh start  --conf-dir DIR [--min-workers N|P%] [--no-wait]
#   hpc-cluster.sh status --conf-dir DIR
#   hpc-cluster.sh stop   --conf-dir DIR
#   hpc-cluster.sh clean  --conf-dir DIR
#   hpc-cluster.sh checknative --conf-dir DIR
#   hpc-cluster.sh apply-mode --mode MODE[,MODE...] --conf-dir DIR
#
# configure: hosts from --hosts FILE, else Slurm's SLURM_JOB_NODELIST, else PBS's PBS_NODEFILE
# (duplicates dropped, order kept). The master (first host, or --master) runs the NameNode,
# ResourceManager and JobHistoryServer; the other hosts (the master too when it is the only one)
# are the workers. DIR gets etc/hadoop's files with every address set for these hosts, the
# modes' properties merged in, per-node state, pid and log directories and the IB host names.
# start: the master's daemons, then each worker's DataNode and NodeManager, at most
# HADOOP_SSH_PARALLEL (10) hosts at a time; reports each host; succeeds when at least
# --min-workers (default: configure's, else 90%) workers run and have registered; prints one
# line per host of what `bin/hadoop checknative` found there (native library, RDMA devices,
# liblustreapi), which never fails the start (HADOOP_HPC_CHECKNATIVE=false skips it).
# status: each host's daemons (over ssh), how many DataNodes and NodeManagers run and how many
# the master has registered; 0 = master and at least --min-workers workers live, 1 = less,
# 3 = nothing runs. stop: every daemon of every host; unreachable hosts are named.
# checknative: the start's checknative lines alone.
# clean: removes each host's node-local state (<local dir>/<host>: HDFS blocks, NodeManager
# local dirs, pid files) after stop; a host where a daemon still runs is left alone.
# apply-mode: merges modes into an existing configuration directory (a copy of etc/hadoop).
# --secure: callers must prove the job's Kerberos keys (a realm of the job's own, its KDC run
# by start on the master; libexec/hpc-security.sh); without it the cluster is open to every
# user of its nodes, and configure and start say so.
# --conf-dir may also be given as --config or HADOOP_CONF_DIR. Settings: docs/user-guide.md,
# chapter "Running on a cluster".
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

# Ports of the master's daemons and of each worker's (Hadoop's defaults, 9000 for HDFS as in
# etc/hadoop).
NN_RPC_PORT=9000
NN_HTTP_PORT=9870
SNN_HTTP_PORT=9868
RM_WEB_PORT=8088
DN_PORT=9866
DN_HTTP_PORT=9864
DN_IPC_PORT=9867
JHS_PORT=10020
JHS_WEB_PORT=19888
JHS_ADMIN_PORT=10033
# Written into (and recognised in) the hadoop-env.sh of a configuration made by configure.
MARKER="written by sbin/hpc-cluster.sh configure"

usage() {
  sed -n '4,38p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 1
}

die() {
  hpc_error "$*"
  exit 1
}

## join WORD...: the words joined by ", " on one line.
join() {
  local out="" w
  for w in "$@"; do
    out+="${out:+, }${w}"
  done
  echo "${out}"
}

## indent TEXT: TEXT's lines prefixed with "      | " (a host's output under its report line).
indent() {
  local line
  [[ -n "$1" ]] || return 0
  while IFS= read -r line; do
    printf '      | %s\n' "${line}"
  done <<<"$1"
}

# ---------------------------------------------------------------------------------------------
# configure

## prop FILE NAME VALUE [COMMENT]: appends one property to the overlay FILE.
prop() {
  local file=$1 name=$2 value=$3 comment=${4:-}
  {
    echo "  <property>"
    [[ -n "${comment}" ]] && echo "    <!-- ${comment} -->"
    echo "    <name>${name}</name>"
    echo "    <value>$(hpc_xml_escape "${value}")</value>"
    echo "  </property>"
  } >>"${file}"
}

## The value of property NAME in the configuration file FILE (as written, unexpanded).
conf_value() {
  awk -v want="$2" '
    /<name>/ { n = $0; sub(/.*<name>[ \t]*/, "", n); sub(/[ \t]*<\/name>.*/, "", n) }
    /<value>/ && n == want { v = $0; sub(/.*<value>/, "", v); sub(/<\/value>.*/, "", v); val = v }
    /<\/property>/ { n = "" }
    END { print val }
  ' "$1"
}

## merge_into DIR OVERLAY: merges the overlay file into DIR's file of the same name.
merge_into() {
  local dir=$1 overlay=$2 target
  target="${dir}/$(basename "${overlay}")"
  if [[ ! -f "${target}" ]]; then
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<configuration>\n</configuration>\n' >"${target}"
  fi
  hpc_conf_merge "${target}" "${overlay}" >"${target}.new" && mv -f "${target}.new" "${target}"
}

## apply_modes BASE DIR MODES: merges each mode's files (BASE/modes/<mode>/*.xml) into DIR.
apply_modes() {
  local base=$1 dir=$2 modes=$3 mode f
  local list=()
  IFS=',' read -r -a list <<<"${modes}"
  for mode in "${list[@]}"; do
    [[ "${mode}" == "default" ]] && continue
    [[ -d "${base}/modes/${mode}" ]] ||
      die "--mode ${mode} does not exist; modes: default $(cd "${base}/modes" 2>/dev/null && for f in */; do printf '%s ' "${f%/}"; done)"
    for f in "${base}/modes/${mode}"/*.xml; do
      [[ -f "${f}" ]] && merge_into "${dir}" "${f}"
    done
  done
}

## The cluster's own properties, one overlay file per site file under DIR.
write_cluster_overlays() {
  local dir=$1 master_host=$2 local_dir=$3 replication=$4 ib=$5
  # shellcheck disable=SC2016  # a Hadoop variable, expanded by each daemon
  local node_host='${env.HADOOP_HPC_NODE_HOST}' f
  for f in core hdfs yarn mapred; do
    printf '<?xml version="1.0" encoding="UTF-8"?>\n<configuration>\n' >"${dir}/${f}-site.xml"
  done
  prop "${dir}/core-site.xml" fs.defaultFS "hdfs://${master_host}:${NN_RPC_PORT}"
  prop "${dir}/core-site.xml" hadoop.tmp.dir "${local_dir}/\${env.HADOOP_HPC_NODE}" \
    "Per-node state (NameNode image, DataNode blocks, NodeManager local dirs) on node-local storage, one directory per host (HADOOP_HPC_NODE = the host's name in the host list)."

  f="${dir}/hdfs-site.xml"
  prop "${f}" dfs.replication "${replication}"
  prop "${f}" dfs.namenode.rpc-address "${master_host}:${NN_RPC_PORT}"
  prop "${f}" dfs.namenode.http-address "${master_host}:${NN_HTTP_PORT}"
  prop "${f}" dfs.namenode.secondary.http-address "${master_host}:${SNN_HTTP_PORT}"
  prop "${f}" dfs.datanode.hostname "${node_host}" \
    "Each DataNode binds and registers with its own name (HADOOP_HPC_NODE_HOST: the IB name or address when configured)."
  prop "${f}" dfs.datanode.address "${node_host}:${DN_PORT}"
  prop "${f}" dfs.datanode.http.address "${node_host}:${DN_HTTP_PORT}"
  prop "${f}" dfs.datanode.ipc.address "${node_host}:${DN_IPC_PORT}"
  if [[ "${ib}" != "none" ]]; then
    prop "${f}" dfs.client.use.datanode.hostname true \
      "Clients and DataNodes connect to the names DataNodes registered (the IB names), not to the address the NameNode saw."
    prop "${f}" dfs.datanode.use.datanode.hostname true
  fi
  if [[ "${ib}" == "interface" ]]; then
    prop "${f}" dfs.namenode.datanode.registration.ip-hostname-check false \
      "DataNodes register with their IB interface's address, which need not resolve back to a name."
  fi

  f="${dir}/yarn-site.xml"
  prop "${f}" yarn.resourcemanager.hostname "${master_host}"
  prop "${f}" yarn.nodemanager.hostname "${node_host}" \
    "Each NodeManager binds and registers with its own name: reducers fetch map outputs from it."
  prop "${f}" mapreduce.hpc.shuffle.bind-host "${node_host}" \
    "The hadoop-hpc shuffle listens on the NodeManager's (IB) name."

  f="${dir}/mapred-site.xml"
  prop "${f}" mapreduce.jobhistory.address "${master_host}:${JHS_PORT}"
  prop "${f}" mapreduce.jobhistory.webapp.address "${master_host}:${JHS_WEB_PORT}"
  prop "${f}" mapreduce.jobhistory.admin.address "${master_host}:${JHS_ADMIN_PORT}"
  for f in core hdfs yarn mapred; do
    echo "</configuration>" >>"${dir}/${f}-site.xml"
  done
}

## env_line NAME VALUE: an export line for hadoop-env.sh, VALUE quoted for the shell.
env_line() {
  printf 'export %s=%q\n' "$1" "$2"
}

cmd_configure() {
  local hosts_file="" modes=default master="" local_dir="" log_dir="" ib_suffix="" ib_iface=""
  local min_spec=90% base="${HADOOP_HOME}/etc/hadoop" conf_dir=${OPT_CONF_DIR:-} secure=false
  while [[ $# -gt 0 ]]; do
    [[ "$1" == "--secure" ]] && { secure=true; shift; continue; }
    [[ $# -ge 2 ]] || die "$1 needs a value"
    case "$1" in
      --hosts) hosts_file=$2 ;;
      --mode) modes=$2 ;;
      --master) master=$2 ;;
      --local-dir) local_dir=$2 ;;
      --log-dir) log_dir=$2 ;;
      --ib-suffix) ib_suffix=$2 ;;
      --ib-interface) ib_iface=$2 ;;
      --min-workers) min_spec=$2 ;;
      --base) base=$2 ;;
      *) die "configure: unknown option '$1'" ;;
    esac
    shift 2
  done
  [[ -n "${conf_dir}" ]] || die "configure needs --conf-dir DIR (the new configuration directory)"
  [[ -z "${ib_suffix}" || -z "${ib_iface}" ]] || die "give --ib-suffix or --ib-interface, not both"
  [[ "${secure}" == "false" || -z "${ib_iface}" ]] ||
    die "--secure needs host names for the Kerberos principals; --ib-interface gives addresses (use --ib-suffix)"
  [[ -f "${base}/core-site.xml" ]] || die "--base ${base} has no core-site.xml"
  base=$(cd -P -- "${base}" && pwd -P)

  hpc_host_list "${hosts_file}" || exit 1
  local host_list=() workers=() h
  mapfile -t host_list <<<"${HPC_HOSTS}"
  master=${master:-${host_list[0]}}
  for h in "${host_list[@]}"; do
    [[ "${h}" == "${master}" ]] || workers+=("${h}")
  done
  [[ ${#workers[@]} -gt 0 ]] || workers=("${master}")
  local need
  need=$(hpc_min_workers "${min_spec}" "${#workers[@]}") || exit 1

  local jobid=${SLURM_JOB_ID:-${PBS_JOBID:-}}
  jobid=${jobid%%.*}
  local_dir=${local_dir:-${TMPDIR:-/tmp}/hadoop-hpc-${USER:-$(id -un)}${jobid:+-${jobid}}}
  [[ "${local_dir}" == /* ]] || die "--local-dir ${local_dir} must be an absolute path (the same on every node)"

  mkdir -p "${conf_dir}" || die "cannot create ${conf_dir}"
  conf_dir=$(cd -P -- "${conf_dir}" && pwd -P)
  [[ "${conf_dir}" != "${base}" ]] || die "--conf-dir must not be the base directory ${base}"
  if [[ -n "$(ls -A "${conf_dir}")" ]] && ! grep -qF "${MARKER}" "${conf_dir}/hadoop-env.sh" 2>/dev/null; then
    die "${conf_dir} is not empty and was not written by hpc-cluster.sh configure; give a new directory"
  fi
  log_dir=${log_dir:-${conf_dir}/logs}
  [[ "${log_dir}" == /* ]] || die "--log-dir ${log_dir} must be an absolute path"

  # The name the master's daemons bind and advertise: with an IB interface, its address there,
  # asked on the master itself.
  local ib=none master_host
  if [[ -n "${ib_iface}" ]]; then
    ib=interface
    master_host=$(hpc_on_host "${master}" env HADOOP_HPC_IB_INTERFACE="${ib_iface}" \
      "${HADOOP_HOME}/sbin/hpc-cluster.sh" node-host) ||
      die "cannot find the address of ${ib_iface} on the master ${master} (see above)"
  else
    [[ -n "${ib_suffix}" ]] && ib=suffix
    master_host="${master}${ib_suffix}"
  fi

  local f
  while IFS= read -r -d '' f; do
    cp -p "${f}" "${conf_dir}/"
  done < <(find "${base}" -maxdepth 1 -type f -print0)
  printf '%s\n' "${workers[@]}" >"${conf_dir}/workers"

  local replication=$((${#workers[@]} < 3 ? ${#workers[@]} : 3)) tmp
  tmp=$(mktemp -d) || exit 1
  write_cluster_overlays "${tmp}" "${master_host}" "${local_dir}" "${replication}" "${ib}"
  for f in "${tmp}"/*.xml; do
    merge_into "${conf_dir}" "${f}"
  done
  rm -rf "${tmp}"
  apply_modes "${base}" "${conf_dir}" "${modes}"
  local secure_env=""
  if [[ "${secure}" == "true" ]]; then
    tmp=$(mktemp -d) || exit 1
    # shellcheck disable=SC2016  # a Hadoop variable, expanded by each daemon
    secure_env=$(hpc_secure_configure "${conf_dir}" "${tmp}" "$(hpc_secure_realm "${jobid}")" \
      "$(id -un)" "${master_host}" '${env.HADOOP_HPC_NODE_HOST}' "${ib_suffix}" "${host_list[@]}") ||
      die "cannot make ${conf_dir} secure (see above)"
    for f in "${tmp}"/*.xml; do
      merge_into "${conf_dir}" "${f}"
    done
    rm -rf "${tmp}"
  fi

  local hdfs=false
  [[ "$(conf_value "${conf_dir}/core-site.xml" fs.defaultFS)" == hdfs://* ]] && hdfs=true
  {
    echo
    echo "# ---- ${MARKER}, $(date '+%F %T'); settings of this cluster ----"
    [[ -n "${JAVA_HOME:-}" ]] && env_line JAVA_HOME "${JAVA_HOME}"
    env_line HADOOP_HPC_CLUSTER_MASTER "${master}"
    env_line HADOOP_HPC_CLUSTER_MASTER_HOST "${master_host}"
    env_line HADOOP_HPC_CLUSTER_MODE "${modes}"
    env_line HADOOP_HPC_CLUSTER_HDFS "${hdfs}"
    env_line HADOOP_HPC_MIN_WORKERS "${min_spec}"
    env_line HADOOP_HPC_IB_SUFFIX "${ib_suffix}"
    env_line HADOOP_HPC_IB_INTERFACE "${ib_iface}"
    echo "# Node-local base of every host's state and pid files; logs per host on the log dir."
    env_line HADOOP_HPC_LOCAL_DIR "${local_dir}"
    env_line HADOOP_HPC_CLUSTER_LOG_DIR "${log_dir}"
    # shellcheck disable=SC2016  # expanded on each host when hadoop-env.sh is sourced
    echo 'export HADOOP_PID_DIR="${HADOOP_HPC_LOCAL_DIR}/${HADOOP_HPC_NODE}/pids"'
    # shellcheck disable=SC2016
    echo 'export HADOOP_LOG_DIR="${HADOOP_HPC_CLUSTER_LOG_DIR}/${HADOOP_HPC_NODE}"'
    [[ -n "${secure_env}" ]] && printf '%s\n' "# Kerberos (--secure): the job's realm; commands log in as the owner from the keytab." "${secure_env}"
  } >>"${conf_dir}/hadoop-env.sh"

  local shown=${master}
  [[ "${master_host}" != "${master}" ]] && shown="${master} (daemons on ${master_host})"
  echo "hpc-cluster: ${#host_list[@]} host(s) from ${HPC_HOSTS_SOURCE}"
  echo "  master     ${shown}: namenode, resourcemanager, historyserver"
  echo "  workers    ${#workers[@]}: ${workers[*]}"
  echo "  need       ${need} live worker(s) (--min-workers ${min_spec})"
  echo "  mode       ${modes}$([[ "${hdfs}" == "true" ]] || echo ' (no HDFS)')"
  case "${ib}" in
    suffix) echo "  ib names   <host>${ib_suffix}" ;;
    interface) echo "  ib names   address of ${ib_iface} on each host" ;;
    *) echo "  ib names   none (daemons use the host list's names)" ;;
  esac
  echo "  state      ${local_dir}/<host> (node-local; pids in .../<host>/pids)"
  echo "  logs       ${log_dir}/<host>"
  if [[ "${secure}" == "true" ]]; then
    echo "  security   Kerberos realm $(sed -n 's/^export HADOOP_HPC_KRB_REALM=//p' <<<"${secure_env}") (KDC on ${master_host} from start); keys in ${conf_dir}/security"
  else
    hpc_secure_open_banner
  fi
  echo "wrote ${conf_dir}"
  echo "next: ${HADOOP_HOME}/sbin/hpc-cluster.sh start --conf-dir ${conf_dir}"
}

cmd_apply_mode() {
  local modes="" conf_dir=${OPT_CONF_DIR:-}
  while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || die "$1 needs a value"
    case "$1" in
      --mode) modes=$2 ;;
      *) die "apply-mode: unknown option '$1'" ;;
    esac
    shift 2
  done
  [[ -n "${modes}" && -n "${conf_dir}" ]] || die "usage: hpc-cluster.sh apply-mode --mode MODE --conf-dir DIR"
  [[ -f "${conf_dir}/core-site.xml" ]] || die "${conf_dir} has no core-site.xml (copy etc/hadoop first)"
  apply_modes "${HADOOP_HOME}/etc/hadoop" "${conf_dir}" "${modes}"
  echo "merged mode(s) ${modes} into ${conf_dir}"
}

# ---------------------------------------------------------------------------------------------
# start, status, stop (run where the user is; each host's part runs there as node-*)

## Loads the configuration directory of a cluster made by configure. Sets WORKERS, MASTER.
load_cluster() {
  HADOOP_CONF_DIR=${OPT_CONF_DIR:-${HADOOP_CONF_DIR:-}}
  [[ -n "${HADOOP_CONF_DIR}" ]] || die "give the cluster's configuration directory: --conf-dir DIR"
  hpc_load_env
  grep -qF "${MARKER}" "${HADOOP_CONF_DIR}/hadoop-env.sh" 2>/dev/null ||
    die "${HADOOP_CONF_DIR} was not written by 'hpc-cluster.sh configure'"
  MASTER=${HADOOP_HPC_CLUSTER_MASTER}
  WORKERS=$(hpc_workers) || exit 1
  WORKERS=$(tr '\n' ' ' <<<"${WORKERS}")
  WORKERS=${WORKERS% }
}

master_daemons() {
  # the job's KDC first: every other daemon logs in with it
  [[ "${HADOOP_HPC_SECURE:-false}" == "true" ]] && printf '%s ' kdc
  [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]] && printf '%s ' namenode
  printf '%s' "resourcemanager historyserver"
}

worker_daemons() {
  [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]] && printf '%s ' datanode
  printf '%s' "nodemanager"
}

## on_each OUTDIR HOSTS SUBCMD DAEMONS: hpc-cluster.sh SUBCMD on every host, bounded fan-out.
on_each() {
  local outdir=$1 hosts=$2 subcmd=$3 daemons=$4
  mkdir -p "${outdir}"
  # shellcheck disable=SC2086  # DAEMONS is a list of words
  hpc_fanout "${outdir}" "${hosts}" "${HADOOP_HOME}/sbin/hpc-cluster.sh" "${subcmd}" \
    --conf-dir "${HADOOP_CONF_DIR}" ${daemons}
}

## report OUTDIR HOSTS ROLE [WORD]: one line per host (ok, UNREACHABLE, DEAD for exit code 3,
## else WORD, default FAILED) with the host's output indented under the others. Sets OK_HOSTS
## and BAD_HOSTS, and adds the unreachable ones to UNREACHABLE_HOSTS.
report() {
  local outdir=$1 hosts=$2 role=$3 word=${4:-FAILED} host rc out
  OK_HOSTS=()
  BAD_HOSTS=()
  for host in ${hosts}; do
    rc=$(cat "${outdir}/${host}.rc" 2>/dev/null || echo 255)
    out=$(cat "${outdir}/${host}.out" 2>/dev/null)
    if [[ "${rc}" == "0" ]]; then
      OK_HOSTS+=("${host}")
      printf '  %-20s %-7s ok      %s\n' "${host}" "${role}" "$(tail -n 1 <<<"${out}")"
    elif [[ "${rc}" == "255" ]]; then
      BAD_HOSTS+=("${host}")
      UNREACHABLE_HOSTS+=("${host}")
      printf '  %-20s %-7s UNREACHABLE (ssh exit 255)\n' "${host}" "${role}"
      indent "${out}"
    else
      BAD_HOSTS+=("${host}")
      [[ "${rc}" == "3" ]] && word=DEAD
      printf '  %-20s %-7s %s\n' "${host}" "${role}" "${word}"
      indent "${out}"
    fi
  done
  return 0
}

## all_hosts: the master and the workers, each once.
all_hosts() {
  tr ' ' '\n' <<<"${MASTER} ${WORKERS}" | awk 'NF && !seen[$0]++' | tr '\n' ' '
}

## native_report OUTDIR: `checknative` on every host the cluster reached (all but the
## UNREACHABLE_HOSTS), one line each. Only reports: a host without RDMA or Lustre still runs.
native_report() {
  local outdir=$1 hosts=() host rc out
  for host in $(all_hosts); do
    [[ " ${UNREACHABLE_HOSTS[*]} " == *" ${host} "* ]] || hosts+=("${host}")
  done
  [[ ${#hosts[@]} -gt 0 ]] || return 0
  echo "Native libraries on each host (bin/hadoop checknative):"
  on_each "${outdir}" "${hosts[*]}" node-checknative ""
  for host in "${hosts[@]}"; do
    rc=$(cat "${outdir}/${host}.rc" 2>/dev/null || echo 255)
    out=$(cat "${outdir}/${host}.out" 2>/dev/null)
    if [[ "${rc}" == "0" ]]; then
      printf '  %-20s native  %s\n' "${host}" "${out}"
    else
      printf '  %-20s native  checknative failed (exit %s): %s\n' "${host}" "${rc}" "$(tail -n 1 <<<"${out}")"
    fi
  done
  return 0
}

## Live DataNodes and NodeManagers the master sees (HPC_LIVE_DN, HPC_LIVE_NM), and safe mode.
master_view() {
  local h=${HADOOP_HPC_CLUSTER_MASTER_HOST} info
  [[ "${HADOOP_HPC_SECURE:-false}" == "true" ]] && { hpc_secure_master_view; return; }
  HPC_LIVE_DN=0
  HPC_SAFEMODE=off
  if [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]]; then
    HPC_LIVE_DN=$(hpc_http_get "${h}" "${NN_HTTP_PORT}" \
      "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" | hpc_json_number NumLiveDataNodes)
    info=$(hpc_http_get "${h}" "${NN_HTTP_PORT}" "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")
    grep -q '"Safemode" *: *""' <<<"${info}" || HPC_SAFEMODE=on
  fi
  HPC_LIVE_NM=$(hpc_http_get "${h}" "${RM_WEB_PORT}" \
    "/jmx?qry=Hadoop:service=ResourceManager,name=ClusterMetrics" | hpc_json_number NumActiveNMs)
  HPC_LIVE_DN=${HPC_LIVE_DN:-0}
  HPC_LIVE_NM=${HPC_LIVE_NM:-0}
}

## registered (a probe for hpc_wait_ready): true once NEED workers have registered with the
## master (and HDFS left safe mode), and then all STARTED ones or HADOOP_HPC_START_GRACE (15 s)
## passed. HPC_REGISTERED: how many did.
registered() {
  local live
  master_view
  live=${HPC_LIVE_NM}
  if [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]]; then
    ((HPC_LIVE_DN < live)) && live=${HPC_LIVE_DN}
    HPC_STATE="datanodes ${HPC_LIVE_DN}/${STARTED}, nodemanagers ${HPC_LIVE_NM}/${STARTED}, safe mode ${HPC_SAFEMODE}"
  else
    HPC_STATE="nodemanagers ${HPC_LIVE_NM}/${STARTED}"
  fi
  HPC_REGISTERED=${live}
  ((live >= NEED)) && [[ "${HPC_SAFEMODE}" == "off" ]] || return 1
  GRACE_END=${GRACE_END:-$((SECONDS + ${HADOOP_HPC_START_GRACE:-15}))}
  ((live >= STARTED || SECONDS >= GRACE_END))
}

cmd_start() {
  local min_spec="" wait=true
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --min-workers) [[ $# -ge 2 ]] || die "--min-workers needs a value"; min_spec=$2; shift 2 ;;
      --no-wait) wait=false; shift ;;
      *) die "start: unknown option '$1'" ;;
    esac
  done
  load_cluster
  local nworkers need out
  UNREACHABLE_HOSTS=()
  nworkers=$(wc -w <<<"${WORKERS}")
  min_spec=${min_spec:-${HADOOP_HPC_MIN_WORKERS:-90%}}
  need=$(hpc_min_workers "${min_spec}" "${nworkers}") || exit 1
  out=$(mktemp -d) || exit 1
  # shellcheck disable=SC2064  # the directory is fixed now
  trap "rm -rf '${out}'" EXIT

  [[ "${HADOOP_HPC_SECURE:-false}" == "true" ]] || hpc_secure_open_banner
  echo "Starting the master's daemons on ${MASTER}: $(master_daemons)"
  on_each "${out}/master" "${MASTER}" node-start "$(master_daemons)"
  report "${out}/master" "${MASTER}" master
  if [[ ${#OK_HOSTS[@]} -eq 0 ]]; then
    die "cluster not started: the master ${MASTER} failed (above); no worker was started"
  fi

  echo "Starting the workers' daemons on ${nworkers} host(s), at most ${HADOOP_SSH_PARALLEL:-10} at a time: $(worker_daemons)"
  on_each "${out}/workers" "${WORKERS}" node-start "$(worker_daemons)"
  report "${out}/workers" "${WORKERS}" worker
  local started=${#OK_HOSTS[@]} failed=("${BAD_HOSTS[@]}")
  echo "workers started: ${started}/${nworkers} (need ${need}, --min-workers ${min_spec})"
  # while the daemons come up; before the verdict, so a failed start shows it too
  [[ "${HADOOP_HPC_CHECKNATIVE:-true}" == "false" ]] || native_report "${out}/native"
  if ((started < need)); then
    hpc_error "cluster not started: only ${started} of ${nworkers} workers started, ${need} needed; failed: ${failed[*]}"
    hpc_error "the daemons that did start are still running: 'hpc-cluster.sh stop --conf-dir ${HADOOP_CONF_DIR}' stops them"
    exit 1
  fi
  if [[ "${wait}" == "true" ]]; then
    NEED=${need} STARTED=${started} GRACE_END=""
    echo "Waiting for ${need} worker(s) to register (timeout ${HADOOP_HPC_START_TIMEOUT}s)"
    if ! hpc_wait_ready workers registered; then
      hpc_error "${HPC_WAIT_ERROR}: fewer than ${need} workers registered; logs: ${HADOOP_HPC_CLUSTER_LOG_DIR}/<host>; 'hpc-cluster.sh status' shows each host"
      exit 1
    fi
    started=${HPC_REGISTERED}
  fi
  if [[ ${#failed[@]} -gt 0 ]]; then
    hpc_warn "running without ${#failed[@]} worker(s): ${failed[*]}"
  fi
  echo "cluster ready: master ${MASTER}, ${started}/${nworkers} workers; fs.defaultFS=$(
    [[ "${HADOOP_HPC_CLUSTER_HDFS}" == "true" ]] &&
      echo "hdfs://${HADOOP_HPC_CLUSTER_MASTER_HOST}:${NN_RPC_PORT}" || echo "(no HDFS)")," \
    "ResourceManager http://${HADOOP_HPC_CLUSTER_MASTER_HOST}:${RM_WEB_PORT}"
  echo "use it with: ${HADOOP_HOME}/bin/hadoop --config ${HADOOP_CONF_DIR} ..."
}

## daemon_counts OUTDIR NWORKERS MASTER_OK: one line with, per worker daemon, on how many
## workers it runs (from their node-status answers in OUTDIR) and, when the master runs, how
## many the master has registered: a worker whose DataNode died but whose NodeManager runs
## (or the reverse) shows in the counts.
daemon_counts() {
  local outdir=$1 nworkers=$2 master_ok=$3 d running registered line="" late=false
  [[ "${master_ok}" == "true" ]] && master_view
  for d in $(worker_daemons); do
    running=$(grep -l -- "${d} pid [0-9]" "${outdir}"/*.out 2>/dev/null | wc -l)
    line+="${line:+, }${d} ${running}/${nworkers} running"
    if [[ "${master_ok}" == "true" ]]; then
      registered=${HPC_LIVE_NM}
      [[ "${d}" == "datanode" ]] && registered=${HPC_LIVE_DN}
      line+=" (${registered} registered)"
      ((registered > running)) && late=true
    fi
  done
  # the master counts a daemon until its liveness timeout passes (NameNode: 10.5 min, RM: 10 min
  # by default)
  [[ "${late}" == "true" ]] && line+="; a daemon that died lately stays registered until the master's liveness timeout"
  echo "workers' daemons: ${line}"
}

cmd_status() {
  [[ $# -eq 0 ]] || die "status: unknown option '$1'"
  load_cluster
  local out nworkers need master_ok=false live dead
  nworkers=$(wc -w <<<"${WORKERS}")
  need=$(hpc_min_workers "${HADOOP_HPC_MIN_WORKERS:-90%}" "${nworkers}") || exit 1
  out=$(mktemp -d) || exit 1
  # shellcheck disable=SC2064
  trap "rm -rf '${out}'" EXIT
  echo "cluster ${HADOOP_CONF_DIR} (mode ${HADOOP_HPC_CLUSTER_MODE})"
  on_each "${out}/master" "${MASTER}" node-status "$(master_daemons)"
  on_each "${out}/workers" "${WORKERS}" node-status "$(worker_daemons)"
  report "${out}/master" "${MASTER}" master PARTIAL
  [[ ${#OK_HOSTS[@]} -eq 1 ]] && master_ok=true
  report "${out}/workers" "${WORKERS}" worker PARTIAL
  live=${#OK_HOSTS[@]}
  dead=("${BAD_HOSTS[@]}")
  daemon_counts "${out}/workers" "${nworkers}" "${master_ok}"
  echo "live workers: ${live}/${nworkers} (need ${need})${dead[*]:+; not live: ${dead[*]}}"
  if [[ "${master_ok}" == "true" && "${live}" -ge "${need}" ]]; then
    exit 0
  fi
  # 3: nothing of the cluster runs anywhere we could reach (every node said 3)
  if ! grep -qvx 3 "${out}"/master/*.rc "${out}"/workers/*.rc; then
    exit 3
  fi
  exit 1
}

## begin_cluster_cmd NAME [ARG...]: loads the cluster for a command that takes no options;
## OUT: a scratch directory, removed at exit.
begin_cluster_cmd() {
  [[ $# -lt 2 ]] || die "$1: unknown option '$2'"
  load_cluster
  OUT=$(mktemp -d) || exit 1
  # shellcheck disable=SC2064  # the directory is fixed now
  trap "rm -rf '${OUT}'" EXIT
}

cmd_stop() {
  begin_cluster_cmd stop "$@"
  local out=${OUT} rc=0
  echo "Stopping the workers' daemons on $(wc -w <<<"${WORKERS}") host(s)"
  on_each "${out}/workers" "${WORKERS}" node-stop "$(worker_daemons)"
  report "${out}/workers" "${WORKERS}" worker
  [[ ${#BAD_HOSTS[@]} -eq 0 ]] || rc=1
  echo "Stopping the master's daemons on ${MASTER}"
  on_each "${out}/master" "${MASTER}" node-stop "$(master_daemons)"
  report "${out}/master" "${MASTER}" master
  [[ ${#BAD_HOSTS[@]} -eq 0 ]] || rc=1
  exit "${rc}"
}

cmd_clean() {
  begin_cluster_cmd clean "$@"
  local out=${OUT} rc=0
  echo "Removing the node-local state ${HADOOP_HPC_LOCAL_DIR}/<host> of every host"
  on_each "${out}/all" "${MASTER} ${WORKERS}" node-clean "$(master_daemons) $(worker_daemons)"
  report "${out}/all" "$(tr ' ' '\n' <<<"${MASTER} ${WORKERS}" | awk '!seen[$0]++' | tr '\n' ' ')" host
  [[ ${#BAD_HOSTS[@]} -eq 0 ]] || rc=1
  exit "${rc}"
}

cmd_checknative() {
  begin_cluster_cmd checknative "$@"
  UNREACHABLE_HOSTS=()
  native_report "${OUT}/native"
}

# ---------------------------------------------------------------------------------------------
# one host's part (run on that host, over ssh, by start/status/stop)

program_of() {
  case "$1" in
    namenode|datanode|secondarynamenode) echo hdfs ;;
    resourcemanager|nodemanager) echo yarn ;;
    historyserver) echo mapred ;;
    *) die "unknown daemon $1" ;;
  esac
}

## node-start DAEMON...: starts this host's daemons (formats a new NameNode first); on success
## one line "daemon pid N, ...", else why (with the log's last lines) on stdout.
node_start() {
  local d pid rc=0 started=() name_dir prog
  for d in "$@"; do
    if pid=$(hpc_daemon_pid "${d}"); then
      started+=("${d} pid ${pid} (already running)")
      continue
    fi
    if [[ "${d}" == "kdc" ]]; then
      if hpc_kdc_start; then started+=("kdc pid $(hpc_daemon_pid kdc)"); else rc=1; fi
      continue
    fi
    prog=$(program_of "${d}")
    if [[ "${d}" == "namenode" ]]; then
      name_dir="${HADOOP_HPC_LOCAL_DIR}/${HADOOP_HPC_NODE}/dfs/name"
      if [[ ! -f "${name_dir}/current/VERSION" ]]; then
        if ! "${HADOOP_HOME}/bin/hdfs" --config "${HADOOP_CONF_DIR}" namenode -format \
            -nonInteractive >"${HADOOP_LOG_DIR}/namenode-format.log" 2>&1; then
          echo "namenode: formatting a new HDFS in ${name_dir} failed; last lines of ${HADOOP_LOG_DIR}/namenode-format.log:"
          tail -n "${HADOOP_HPC_LOG_TAIL:-10}" "${HADOOP_LOG_DIR}/namenode-format.log"
          rc=1
          continue
        fi
      fi
    fi
    if "${HADOOP_HOME}/bin/${prog}" --config "${HADOOP_CONF_DIR}" --daemon start "${d}" 2>&1 |
        grep -v '^started '; [[ ${PIPESTATUS[0]} -eq 0 ]]; then
      started+=("${d} pid $(hpc_daemon_pid "${d}")")
    else
      rc=1
    fi
  done
  if [[ ${rc} -eq 0 ]]; then
    join "${started[@]}"
  else
    echo "started: $(join "${started[@]}")"
  fi
  return "${rc}"
}

## node-status DAEMON...: 0 all run, 3 none, 1 some (LSB-style), one line of what runs.
node_status() {
  local d pid up=() down=()
  for d in "$@"; do
    if pid=$(hpc_daemon_pid "${d}"); then up+=("${d} pid ${pid}"); else down+=("${d}"); fi
  done
  local line=""
  [[ ${#up[@]} -gt 0 ]] && line=$(join "${up[@]}")
  [[ ${#down[@]} -gt 0 ]] && line="${line:+${line}; }not running: ${down[*]} (logs: ${HADOOP_LOG_DIR})"
  echo "${line}"
  [[ ${#down[@]} -eq 0 ]] && return 0
  [[ ${#up[@]} -eq 0 ]] && return 3
  return 1
}

node_stop() {
  local d rc=0 stopped=()
  for d in "$@"; do
    hpc_daemon_stop "${d}" >/dev/null || rc=1
    stopped+=("${d}")
  done
  echo "stopped ${stopped[*]}"
  return "${rc}"
}

## native_summary: `hadoop checknative`'s report (on stdin) on one line: each capability, true
## or false, with the version / devices / library found, or the first clause of why not.
native_summary() {
  awk '
    function reason(t) { sub(/; .*/, "", t); sub(/ \(.*/, "", t); return t }
    /^(hpcnative|rdma|liblustreapi): / {
      name = $1; sub(/:$/, "", name); ok = $2; text = $0; sub(/^[^ ]+ +[^ ]+ */, "", text)
      order[++n] = name; state[name] = ok
      if (ok != "true") { why[name] = reason(text); next }
      if (name == "hpcnative") { v = text; sub(/.*\(version /, "", v); sub(/[,)].*/, "", v); why[name] = "version " v }
      else why[name] = text
      next
    }
    # a device line under rdma: its name
    /^ +[^ ]/ && order[n] == "rdma" { d = $1; sub(/:$/, "", d); if (!seen[d]++) devs = devs (devs == "" ? "" : " ") d }
    END {
      if (n == 0) { print "no report (see bin/hadoop checknative on this host)"; exit 1 }
      for (i = 1; i <= n; i++) {
        name = order[i]; w = why[name]
        if (name == "rdma" && state[name] == "true" && devs != "") w = w ": " devs
        printf "%s%s %s%s", (i > 1 ? ", " : ""), name, state[name], (w == "" ? "" : " (" w ")")
      }
      print ""
    }'
}

## node-checknative: this host's `hadoop checknative` on one line (bounded: a JVM that hangs is
## reported, not waited for).
node_checknative() {
  local report rc
  report=$(timeout -k 5 "${HADOOP_HPC_CHECKNATIVE_TIMEOUT:-60}" \
    "${HADOOP_HOME}/bin/hadoop" --config "${HADOOP_CONF_DIR}" checknative 2>&1)
  rc=$?
  if [[ ${rc} -ne 0 ]]; then
    echo "${report}"
    [[ ${rc} -eq 124 ]] && echo "no answer within ${HADOOP_HPC_CHECKNATIVE_TIMEOUT:-60}s"
    return "${rc}"
  fi
  native_summary <<<"${report}"
}

## node-clean DAEMON...: removes this host's node-local state unless one of DAEMONS runs.
node_clean() {
  local d pid dir="${HADOOP_HPC_LOCAL_DIR}/${HADOOP_HPC_NODE}"
  for d in "$@"; do
    if pid=$(hpc_daemon_pid "${d}"); then
      echo "${d} pid ${pid} still runs: kept ${dir} ('hpc-cluster.sh stop' first)"
      return 1
    fi
  done
  [[ "${dir}" == /?*/?* ]] || { echo "refusing to remove '${dir}'"; return 1; }
  rm -rf "${dir}" || return 1
  rmdir "${HADOOP_HPC_LOCAL_DIR}" 2>/dev/null
  echo "removed ${dir}"
}

# ---------------------------------------------------------------------------------------------

hpc_home
HPC_HOSTNAME=$(hostname 2>/dev/null || echo localhost)
[[ $# -ge 1 ]] || usage
sub=$1
shift
OPT_CONF_DIR=""
args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --conf-dir|--config)
      [[ $# -ge 2 ]] || die "$1 needs a directory"
      OPT_CONF_DIR=$2
      shift 2
      ;;
    *) args+=("$1"); shift ;;
  esac
done
case "${sub}" in
  configure) cmd_configure "${args[@]}" ;;
  start) cmd_start "${args[@]}" ;;
  status) cmd_status "${args[@]}" ;;
  stop) cmd_stop "${args[@]}" ;;
  clean) cmd_clean "${args[@]}" ;;
  apply-mode) cmd_apply_mode "${args[@]}" ;;
  checknative) cmd_checknative "${args[@]}" ;;
  node-start|node-status|node-stop|node-clean|node-checknative)
    HADOOP_CONF_DIR=${OPT_CONF_DIR}
    hpc_load_env
    # This host's state (NameNode image, blocks, pids) usually lies in /tmp, where another user
    # could make the directory first (job ids are public) and plant a NameNode image in it.
    if [[ -n "${HADOOP_HPC_LOCAL_DIR:-}" ]]; then
      hpc_private_dir "${HADOOP_HPC_LOCAL_DIR}/${HADOOP_HPC_NODE}" || exit 1
    fi
    mkdir -p "${HADOOP_LOG_DIR}" "${HADOOP_PID_DIR}" || die "cannot create ${HADOOP_LOG_DIR} or ${HADOOP_PID_DIR}"
    "node_${sub#node-}" "${args[@]}"
    ;;
  node-host)
    hpc_node_host "${HADOOP_HPC_NODE:-${HPC_HOSTNAME}}"
    ;;
  -h|--help|help) usage ;;
  *) hpc_error "unknown subcommand '${sub}'"; usage ;;
esac
