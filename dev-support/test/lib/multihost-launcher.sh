# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# The multi-host lane's launcher checks, sourced by multihost.sh after its cluster checks: a
# real Slurm (munged, slurmctld, a slurmd per host, in the hosts' namespaces) runs the shipped
# sbatch example and a job that gets the time-limit warning, then sbin/hpc-slurm.sh runs from a
# PBS node file and is stopped as qdel stops it. Uses the lane's hosts and helpers (on, addr,
# start_sshd, no_jvm_left, die, phase, pass/fail) and its MASTER, NODES, H, work, MUNGE_DIR,
# SLURM_ROWS; victim2 is the host the lane killed last, if any.

## slurm_up: munged (own socket), slurmctld on the master and a slurmd on every host, all in
## the hosts' namespaces; waits until every node is idle.
slurm_up() {
  local dir="${work}/slurm" node _
  mkdir -p "${dir}/state" "${dir}/log" "${dir}/spool" "${MUNGE_DIR}" &&
    chown munge:munge "${MUNGE_DIR}" && chmod 0755 "${MUNGE_DIR}" || return 1
  on "${MASTER}" runuser -u munge -- /usr/sbin/munged --socket="${MUNGE_DIR}/munge.socket" \
    --pid-file="${MUNGE_DIR}/munged.pid" --log-file="${MUNGE_DIR}/munged.log" \
    --seed-file="${MUNGE_DIR}/munged.seed" || return 1
  {
    echo "ClusterName=hpcmh"
    echo "SlurmctldHost=${MASTER}($(addr "${MASTER}"))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=${MUNGE_DIR}/munge.socket"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "MailProg=/bin/true"
    echo "MinJobAge=600"
    echo "KillWait=30"
    echo "StateSaveLocation=${dir}/state"
    echo "SlurmdSpoolDir=${dir}/spool/%n"
    echo "SlurmctldPidFile=${dir}/slurmctld.pid"
    echo "SlurmdPidFile=${dir}/slurmd-%n.pid"
    echo "SlurmctldLogFile=${dir}/log/slurmctld.log"
    echo "SlurmdLogFile=${dir}/log/slurmd-%n.log"
    echo "ReturnToService=2"
    for node in "${NODES[@]}"; do
      echo "NodeName=${node} NodeAddr=$(addr "${node}") CPUs=2 RealMemory=4000 State=UNKNOWN"
    done
    echo "PartitionName=lane Nodes=$(IFS=,; echo "${NODES[*]}") Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"${dir}/slurm.conf"
  # slurmd needs a cgroup.conf even with task/none; nothing is mounted
  printf 'CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\nCgroupAutomount=no\n' >"${dir}/cgroup.conf"
  export SLURM_CONF="${dir}/slurm.conf"
  on "${MASTER}" slurmctld || return 1
  for node in "${NODES[@]}"; do
    on "${node}" slurmd -N "${node}" || return 1
  done
  for _ in $(seq 60); do
    [[ "$(on "${MASTER}" sinfo -h -o '%D %T' 2>/dev/null)" == "${#NODES[@]} idle" ]] && return 0
    sleep 1
  done
  on "${MASTER}" sinfo >&2
  return 1
}

## launcher_checks: the launcher, sbin/hpc-slurm.sh, in a real Slurm on the lane's hosts, then
## with a PBS node file.
launcher_checks() {
  local out jobs_dir example jobid state job_out jobid2 sleeper_out pbs_log pbs_pid launcher rc

  phase "slurm: munge, slurmctld on ${MASTER}, slurmd on ${NODES[*]}"
  [[ -n "${victim2:-}" ]] && start_sshd "${victim2}" # the killed host comes back
  slurm_up || die "cannot start Slurm (logs: ${work}/slurm/log)"
  out=$(on "${MASTER}" sinfo -h -o '%D %T %N' 2>&1)
  echo "    sinfo: ${out}"
  [[ "${out}" == "4 idle node[0-3]" ]] && pass "4 slurmd nodes idle" || fail "4 slurmd nodes idle" "${out}"

  phase "slurm: sbatch the shipped example (hpc-slurm.sh: a cluster on the allocation, TeraSort)"
  jobs_dir="${work}/slurm/jobs"
  mkdir -p "${jobs_dir}"
  example="${H}/share/doc/hadoop-hpc/examples/slurm-terasort.sbatch"
  # submitted from the jobs directory, as a user does: the job directory is <submit dir>/hadoop-hpc-<id>
  jobid=$(cd "${jobs_dir}" && on "${MASTER}" env HADOOP_HOME="${H}" TERASORT_ROWS="${SLURM_ROWS}" \
    sbatch --parsable "${example}" 2>&1)
  if [[ "${jobid}" =~ ^[0-9]+$ ]]; then
    pass "sbatch ${example##*/}: job ${jobid}"
  else
    die "sbatch failed: ${jobid}"
  fi
  state=""
  for _ in $(seq 600); do
    state=$(on "${MASTER}" scontrol show job "${jobid}" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [[ "${state}" == PENDING || "${state}" == RUNNING || "${state}" == CONFIGURING || "${state}" == COMPLETING ]] || break
    sleep 1
  done
  job_out="${jobs_dir}/hadoop-hpc-${jobid}.out"
  echo "    --- ${job_out##*/} (the job's output) ---"
  grep -v ' INFO \| WARN \|^Spent \|^Comput\|^Sampling \|^Making ' "${job_out}" | sed 's/^/    | /'
  [[ "${state}" == COMPLETED ]] && pass "job ${jobid} COMPLETED" ||
    fail "job ${jobid} COMPLETED (state ${state})" "$(tail -n 30 "${job_out}")"
  grep -q 'cluster ready: master node0, 3/3 workers' "${job_out}" &&
    pass "the launcher started a cluster on the allocation node[0-3]: master node0, 3 workers" ||
    fail "the launcher started a cluster on the allocation"
  grep -q '^TeraValidate: sorted, checksum' "${job_out}" &&
    pass "TeraSort + TeraValidate in the job: $(sed -n 's/^TeraValidate: //p' "${job_out}" | tr '\t' ' ')" ||
    fail "TeraSort + TeraValidate in the job"
  grep -q 'hpc-slurm: .* exit 0$' "${job_out}" && pass "the launcher exited 0 after stopping the cluster" ||
    fail "the launcher exited 0"
  ls "${jobs_dir}/hadoop-hpc-${jobid}/logs/node1/"hadoop-*-nodemanager-node1.log >/dev/null 2>&1 &&
    pass "every host's logs in the job directory (hadoop-hpc-${jobid}/logs/<host>)" ||
    fail "every host's logs in the job directory" "$(find "${jobs_dir}/hadoop-hpc-${jobid}" 2>&1 | head)"
  [[ ! -e "${TMPDIR:-/tmp}/hadoop-hpc-${USER:-$(id -un)}-${jobid}" ]] &&
    pass "the node-local scratch of every host was removed" ||
    fail "the node-local scratch was removed" "$(find "${TMPDIR:-/tmp}/hadoop-hpc-${USER:-$(id -un)}-${jobid}" | head)"
  no_jvm_left "after the Slurm job"

  # The signal checks run on 2 hosts: how the launcher stops does not depend on how many workers
  # it stops (the 4-host job above covers that), and each host is two JVMs to start.
  phase "slurm: the time-limit warning (scancel -b -s USR1, what --signal=B:USR1@60 sends), 2 hosts"
  cat >"${jobs_dir}/sleeper.sbatch" <<EOF
#!/usr/bin/env bash
#SBATCH --nodes=2
#SBATCH --output=sleeper-%j.out
#SBATCH --signal=B:USR1@60
exec "${H}/sbin/hpc-slurm.sh" -- bash -c 'echo "command running"; sleep 600'
EOF
  jobid2=$(cd "${jobs_dir}" && on "${MASTER}" sbatch --parsable sleeper.sbatch 2>&1)
  [[ "${jobid2}" =~ ^[0-9]+$ ]] || die "sbatch sleeper.sbatch failed: ${jobid2}"
  sleeper_out="${jobs_dir}/sleeper-${jobid2}.out"
  await_line "${sleeper_out}" '^command running' 120 &&
    pass "job ${jobid2}: the launcher's cluster is up and its command runs" ||
    fail "job ${jobid2}: the launcher's command runs" "$(tail -n 30 "${sleeper_out}" 2>&1)"
  on "${MASTER}" scancel --batch --signal=USR1 "${jobid2}"
  state=""
  for _ in $(seq 120); do
    state=$(on "${MASTER}" scontrol show job "${jobid2}" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
    [[ "${state}" == RUNNING || "${state}" == COMPLETING ]] || break
    sleep 0.5
  done
  echo "    --- sleeper-${jobid2}.out after SIGUSR1 (job state ${state}) ---"
  sed -n '/SIGUSR1/,$p' "${sleeper_out}" | sed 's/^/    | /'
  grep -q 'SIGUSR1 received' "${sleeper_out}" && grep -q 'hpc-slurm: .* exit 138$' "${sleeper_out}" &&
    grep -q 'removed .*/node[0-9]$' "${sleeper_out}" &&
    pass "SIGUSR1: the launcher stopped its command and the cluster, removed the scratch, exited 138" ||
    fail "SIGUSR1: the launcher stopped the cluster and exited 138" "$(tail -n 20 "${sleeper_out}")"
  [[ -z "$(pgrep -f 'sleep 600$')" ]] && pass "the job's command was stopped too" ||
    fail "the job's command was stopped too"
  no_jvm_left "after SIGUSR1"

  phase "pbs: hpc-slurm.sh from a PBS_NODEFILE, stopped by SIGTERM (qdel) while the command runs, 2 hosts"
  # PBS lists a host once per slot; the launcher keeps each once
  printf '%s\n%s\n' "${NODES[0]}" "${NODES[1]}" "${NODES[0]}" "${NODES[1]}" | sort >"${work}/pbs_nodefile"
  pbs_log="${work}/pbs-job.log"
  # not under on_timeout: the test TERMs the launcher itself (its command ends by 600 s anyway)
  on "${MASTER}" env PBS_NODEFILE="${work}/pbs_nodefile" PBS_JOBID=4242.pbs-server \
    PBS_O_WORKDIR="${jobs_dir}" "${H}/sbin/hpc-slurm.sh" -- \
    bash -c 'hadoop fs -mkdir /pbs && hadoop fs -ls / && echo "command running" && sleep 600' \
    >"${pbs_log}" 2>&1 &
  pbs_pid=$!
  for _ in $(seq 240); do
    grep -q 'command running' "${pbs_log}" && break
    kill -0 "${pbs_pid}" 2>/dev/null || break
    sleep 0.5
  done
  grep -q 'hpc-cluster: 2 host(s) from PBS_NODEFILE' "${pbs_log}" && grep -q 'cluster ready: master node0, 1/1 workers' "${pbs_log}" &&
    grep -q 'command running' "${pbs_log}" &&
    pass "the launcher read PBS_NODEFILE (4 lines, 2 hosts) and ran the command on its cluster" ||
    fail "the launcher on a PBS node file" "$(tail -n 30 "${pbs_log}")"
  launcher=$(pgrep -f "hpc-slurm.sh -- bash -c hadoop fs -mkdir /pbs" | head -n 1)
  # never "kill 0" (this lane's own process group) when the launcher was not found
  [[ -n "${launcher}" ]] && kill -TERM "${launcher}" 2>/dev/null
  # stopping a 2-host cluster takes well under a minute; a launcher that ignores SIGTERM
  # fails the check (exit 124) instead of holding the lane
  wait_bounded "${pbs_pid}" 180
  rc=$?
  echo "    --- the launcher's output after SIGTERM ---"
  sed -n '/SIGTERM/,$p' "${pbs_log}" | sed 's/^/    | /'
  [[ ${rc} -eq 143 ]] && grep -q 'SIGTERM received' "${pbs_log}" && grep -q 'removed .*/node1' "${pbs_log}" &&
    pass "SIGTERM: the launcher stopped the cluster, removed the scratch, exited 143" ||
    fail "SIGTERM: the launcher stopped the cluster and exited 143 (exit ${rc})" "$(tail -n 20 "${pbs_log}")"
  [[ -z "$(pgrep -f 'sleep 600$')" ]] && pass "the user's command was stopped too" ||
    fail "the user's command was stopped too"
  no_jvm_left "after SIGTERM"
}
