#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# hpc-slurm.sh: a hadoop-hpc cluster for the life of a batch job. Put it in an sbatch script
# (or run it in an salloc shell, or a PBS job): it configures a cluster on the job's hosts,
# formats and starts it, waits until it is ready, runs your command with HADOOP_CONF_DIR set
# and stdin from /dev/null, then stops every daemon and removes the per-job scratch on each
# node's local disk; also when the job is cancelled or reaches its time limit (SIGTERM, SIGINT,
# or SIGUSR1 from `#SBATCH --signal=B:USR1@60`; start it with `exec` so the batch shell's
# signal reaches it).
#
#   hpc-slurm.sh [--mode MODE[,MODE...]] [--job-dir DIR] [--local-dir DIR] [--hosts FILE]
#       [--min-workers N|P%] [--ib-suffix SUFFIX | --ib-interface IF] [--keep-scratch] [--secure]
#       -- COMMAND [ARG...]
#
# Hosts: --hosts FILE, else Slurm's SLURM_JOB_NODELIST, else PBS's PBS_NODEFILE.
# --job-dir (default: <submit dir>/hadoop-hpc-<job id>, on the shared file system) gets the
# configuration (conf/) and every host's daemon and container logs (logs/<host>/).
# --local-dir (default: $TMPDIR or /tmp, /hadoop-hpc-<user>-<job id>) holds each node's state:
# HDFS blocks, NodeManager local dirs, pid files; removed at the end unless --keep-scratch.
# Exit status: COMMAND's; 1 when the cluster did not start; 128+N after signal N.
# Settings and examples: docs/user-guide.md, chapter "Running on a cluster".
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

usage() {
  sed -n '4,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 1
}

say() {
  echo "hpc-slurm: $(date '+%T') $*"
}

hpc_home
mode=default job_dir="" local_dir="" hosts="" keep_scratch=false
configure_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --) shift; break ;;
    --keep-scratch) keep_scratch=true; shift; continue ;;
    --secure) configure_args+=(--secure); shift; continue ;;
    -h|--help) usage ;;
  esac
  [[ $# -ge 2 ]] || { hpc_error "$1 needs a value (see --help)"; exit 1; }
  case "$1" in
    --mode) mode=$2 ;;
    --job-dir) job_dir=$2 ;;
    --local-dir) local_dir=$2 ;;
    --hosts) hosts=$2 ;;
    --min-workers|--ib-suffix|--ib-interface) configure_args+=("$1" "$2") ;;
    *) hpc_error "unknown option '$1' (see --help)"; exit 1 ;;
  esac
  shift 2
done
[[ $# -gt 0 ]] || { hpc_error "no command to run: hpc-slurm.sh [OPTIONS] -- COMMAND [ARG...]"; exit 1; }

jobid=${SLURM_JOB_ID:-${PBS_JOBID:-}}
jobid=${jobid%%.*}
jobid=${jobid:-$$}
user=${USER:-$(id -un)}
job_dir=${job_dir:-${SLURM_SUBMIT_DIR:-${PBS_O_WORKDIR:-${PWD}}}/hadoop-hpc-${jobid}}
local_dir=${local_dir:-${TMPDIR:-/tmp}/hadoop-hpc-${user}-${jobid}}
mkdir -p "${job_dir}" || { hpc_error "cannot create the job directory ${job_dir}"; exit 1; }
job_dir=$(cd -P -- "${job_dir}" && pwd -P)
conf="${job_dir}/conf"
cluster="${HADOOP_HOME}/sbin/hpc-cluster.sh"
# Stopping must fit in Slurm's KillWait (30 s by default) after a SIGTERM.
export HADOOP_STOP_TIMEOUT=${HADOOP_STOP_TIMEOUT:-10}

child=""       # the step running now (in the background, so a signal is handled at once)
configured=false
finished=false

## step COMMAND...: runs COMMAND in its own process group and waits for it; its exit status.
step() {
  setsid "$@" &
  child=$!
  wait "${child}"
  local rc=$?
  # a trapped signal interrupts wait (status > 128) while the step still runs
  while kill -0 "${child}" 2>/dev/null; do
    wait "${child}"
    rc=$?
  done
  child=""
  return "${rc}"
}

## finish RC: stops the cluster, removes the scratch, says where the logs are, exits RC.
finish() {
  local rc=$1
  [[ "${finished}" == "true" ]] && exit "${rc}"
  finished=true
  trap '' TERM INT USR1 HUP
  if [[ "${configured}" == "true" ]]; then
    say "stopping the cluster"
    "${cluster}" stop --conf-dir "${conf}" || hpc_warn "some hosts could not be stopped (above)"
    if [[ "${keep_scratch}" == "true" ]]; then
      say "kept the node-local scratch ${local_dir}/<host> (--keep-scratch)"
    else
      "${cluster}" clean --conf-dir "${conf}" || hpc_warn "the scratch of some hosts was not removed (above)"
    fi
  fi
  say "configuration and logs of every host: ${job_dir} (conf/, logs/<host>/)"
  say "exit ${rc}"
  exit "${rc}"
}

# shellcheck disable=SC2317  # run from the traps below
## on_signal NAME NUMBER: the job is being cancelled or reaches its time limit.
on_signal() {
  say "SIG$1 received (job cancelled or at its time limit): stopping"
  if [[ -n "${child}" ]]; then
    kill -TERM -- "-${child}" 2>/dev/null || kill -TERM "${child}" 2>/dev/null
  fi
  finish $((128 + $2))
}
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
trap 'on_signal USR1 10' USR1
trap 'on_signal HUP 1' HUP

say "job ${jobid}: ${SLURM_JOB_NODELIST:-${PBS_NODEFILE:-${hosts}}}; job dir ${job_dir}; scratch ${local_dir}"
args=(configure --conf-dir "${conf}" --mode "${mode}" --local-dir "${local_dir}"
  --log-dir "${job_dir}/logs" "${configure_args[@]}")
[[ -n "${hosts}" ]] && args+=(--hosts "${hosts}")
if [[ -e "${conf}" ]]; then
  hpc_error "${conf} exists (an earlier run of job ${jobid}?): give another --job-dir"
  finish 1
fi
step "${cluster}" "${args[@]}" || finish 1
configured=true
say "starting the cluster"
if ! step "${cluster}" start --conf-dir "${conf}"; then
  hpc_error "the cluster did not start (above); logs: ${job_dir}/logs/<host>"
  finish 1
fi

export HADOOP_HOME HADOOP_CONF_DIR="${conf}" PATH="${HADOOP_HOME}/bin:${PATH}"
# --secure: the command logs in as you from the job's keytab (also tools that skip hadoop-env.sh)
while IFS='=' read -r name value; do
  [[ -n "${name}" ]] && export "${name}=${value}"
done < <(hpc_secure_client_env "${conf}")
say "running: $(tr -s '\n ' '  ' <<<"$*")"
# stdin from /dev/null, said outright (bash gives a background job that too, but only without
# job control): a command that reads stdin gets end-of-file at once instead of waiting on the
# terminal of an salloc shell
step "$@" </dev/null
rc=$?
say "the command exited with ${rc}"
finish "${rc}"
