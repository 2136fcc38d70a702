#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# start-yarn.sh [--config DIR]: starts the ResourceManager, the NodeManagers of
# etc/hadoop/workers and the MapReduce JobHistoryServer, then waits until every NodeManager has
# registered with the ResourceManager and the history server answers
# (HADOOP_HPC_START_TIMEOUT seconds, default 180). HADOOP_HPC_START_HISTORYSERVER=false skips
# the history server.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
hpc_conf_load yarn.resourcemanager.address yarn.resourcemanager.webapp.address \
  mapreduce.jobhistory.address mapreduce.jobhistory.webapp.address

rm_host=$(hpc_addr_host "${HPC_CONF[yarn.resourcemanager.address]}")
rm_web=${HPC_CONF[yarn.resourcemanager.webapp.address]}
rm_web_host=$(hpc_addr_host "${rm_web}")
[[ "${rm_web_host}" == "0.0.0.0" ]] && rm_web_host=${rm_host}
rm_web_port=${rm_web##*:}
jhs_host=$(hpc_addr_host "${HPC_CONF[mapreduce.jobhistory.address]}")
[[ "${jhs_host}" == "0.0.0.0" ]] && jhs_host=${rm_host}
jhs_web=${HPC_CONF[mapreduce.jobhistory.webapp.address]}
jhs_web_host=$(hpc_addr_host "${jhs_web}")
[[ "${jhs_web_host}" == "0.0.0.0" ]] && jhs_web_host=${jhs_host}
jhs_web_port=${jhs_web##*:}
start_jhs=${HADOOP_HPC_START_HISTORYSERVER:-true}

## Stops what this run started, then fails: a failed start leaves no daemon behind.
fail() {
  hpc_error "$*; stopping the YARN daemons this start launched"
  "${HADOOP_HOME}/sbin/stop-yarn.sh" --config "${HADOOP_CONF_DIR}" >/dev/null 2>&1
  exit 1
}
workers=$(hpc_workers) || exit 1
expected=$(wc -w <<<"${workers}")

yarn=("${HADOOP_HOME}/bin/yarn" --config "${HADOOP_CONF_DIR}")
local_daemons=()

echo "Starting resourcemanager on [${rm_host}]"
if ! hpc_on_hosts "${rm_host}" "${yarn[@]}" --daemon start resourcemanager; then
  hpc_error "YARN not started: the resourcemanager on ${rm_host} could not start (see above)"
  exit 1
fi
hpc_is_local_host "${rm_host}" && local_daemons+=(resourcemanager)

echo "Starting nodemanagers on [$(echo "${workers}" | tr '\n' ' ' | sed 's/ $//')]"
if ! hpc_on_hosts "${workers}" "${yarn[@]}" --daemon start nodemanager; then
  fail "YARN not started: a nodemanager could not start (see above)"
fi
for w in ${workers}; do
  if hpc_is_local_host "${w}"; then
    local_daemons+=(nodemanager)
    break
  fi
done

if [[ "${start_jhs}" == "true" ]]; then
  echo "Starting historyserver on [${jhs_host}]"
  if ! hpc_on_hosts "${jhs_host}" "${HADOOP_HOME}/bin/mapred" --config "${HADOOP_CONF_DIR}" \
      --daemon start historyserver; then
    fail "YARN not started: the historyserver could not start (see above)"
  fi
  hpc_is_local_host "${jhs_host}" && local_daemons+=(historyserver)
fi

## Ready when the ResourceManager we started sees every NodeManager and the history server
## (if started) answers.
yarn_ready() {
  local metrics active jhs_pid ours=true
  HPC_STATE="resourcemanager web UI http://${rm_web_host}:${rm_web_port} not answering yet"
  metrics=$(hpc_http_get "${rm_web_host}" "${rm_web_port}" \
    "/jmx?qry=Hadoop:service=ResourceManager,name=ClusterMetrics") || return 1
  [[ -n "${metrics}" ]] || return 1
  if hpc_is_local_host "${rm_host}"; then
    [[ "$(hpc_jmx_pid "${rm_web_host}" "${rm_web_port}")" == "$(hpc_daemon_pid resourcemanager)" ]] || ours=false
  fi
  active=$(hpc_json_number NumActiveNMs <<<"${metrics}")
  active=${active:-0}
  HPC_STATE="${active}/${expected} nodemanagers registered"
  if [[ "${start_jhs}" == "true" ]]; then
    jhs_pid=$(hpc_jmx_pid "${jhs_web_host}" "${jhs_web_port}")
    if [[ -z "${jhs_pid}" ]]; then
      HPC_STATE="${HPC_STATE}, historyserver not answering yet"
      return 1
    fi
    if hpc_is_local_host "${jhs_host}" && [[ "${jhs_pid}" != "$(hpc_daemon_pid historyserver)" ]]; then
      return 1
    fi
  fi
  [[ "${ours}" == "true" && "${active}" -ge "${expected}" ]] || return 1
  HPC_STATE="resourcemanager ${HPC_CONF[yarn.resourcemanager.address]} (web http://${rm_web_host}:${rm_web_port}), ${HPC_STATE}"
}

echo "Waiting for YARN: ${expected} nodemanager(s) registered (timeout ${HADOOP_HPC_START_TIMEOUT}s)"
hpc_wait_ready YARN yarn_ready "${local_daemons[@]}" ||
  fail "${HPC_WAIT_ERROR}; see the resourcemanager and nodemanager logs in ${HADOOP_LOG_DIR} on each host"
