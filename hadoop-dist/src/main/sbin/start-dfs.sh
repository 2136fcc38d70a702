#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# start-dfs.sh [--config DIR]: starts the NameNode, the DataNodes of etc/hadoop/workers and the
# Secondary NameNode, then waits until HDFS is usable: NameNode out of safe mode and every
# worker's DataNode live (HADOOP_HPC_START_TIMEOUT seconds, default 180). A daemon that dies on
# the way is named with the reason from its log.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
hpc_conf_load fs.defaultFS dfs.namenode.rpc-address dfs.namenode.http-address \
  dfs.namenode.secondary.http-address dfs.namenode.name.dir

## Stops what this run started, then fails: a failed start leaves no daemon behind.
fail() {
  hpc_error "$*; stopping the HDFS daemons this start launched"
  "${HADOOP_HOME}/sbin/stop-dfs.sh" --config "${HADOOP_CONF_DIR}" >/dev/null 2>&1
  exit 1
}

nn_rpc=${HPC_CONF[dfs.namenode.rpc-address]}
if [[ -z "${nn_rpc}" ]]; then
  fs=${HPC_CONF[fs.defaultFS]}
  if [[ "${fs}" != hdfs://* ]]; then
    hpc_error "fs.defaultFS=${fs} is not an hdfs:// URI; set it in ${HADOOP_CONF_DIR}/core-site.xml"
    exit 1
  fi
  nn_rpc=${fs#hdfs://}
  nn_rpc=${nn_rpc%%/*}
  [[ "${nn_rpc}" == *:* ]] || nn_rpc="${nn_rpc}:8020"
fi
nn_host=$(hpc_addr_host "${nn_rpc}")
nn_http=${HPC_CONF[dfs.namenode.http-address]}
nn_http_host=$(hpc_addr_host "${nn_http}")
[[ "${nn_http_host}" == "0.0.0.0" ]] && nn_http_host=${nn_host}
nn_http_port=${nn_http##*:}
snn_host=$(hpc_addr_host "${HPC_CONF[dfs.namenode.secondary.http-address]}")
[[ "${snn_host}" == "0.0.0.0" ]] && snn_host=${nn_host}
workers=$(hpc_workers) || exit 1
expected=$(wc -w <<<"${workers}")

hdfs=("${HADOOP_HOME}/bin/hdfs" --config "${HADOOP_CONF_DIR}")
local_daemons=()

if hpc_is_local_host "${nn_host}"; then
  IFS=',' read -r -a name_dirs <<<"${HPC_CONF[dfs.namenode.name.dir]}"
  for d in "${name_dirs[@]}"; do
    d=${d#file://}
    if [[ ! -f "${d}/current/VERSION" ]]; then
      hpc_error "the NameNode is not formatted (no ${d}/current/VERSION); run '${HADOOP_HOME}/bin/hdfs --config ${HADOOP_CONF_DIR} namenode -format' first"
      exit 1
    fi
  done
fi

echo "Starting namenode on [${nn_host}]"
if ! hpc_on_hosts "${nn_host}" "${hdfs[@]}" --daemon start namenode; then
  hpc_error "HDFS not started: the namenode on ${nn_host} could not start (see above)"
  exit 1
fi
hpc_is_local_host "${nn_host}" && local_daemons+=(namenode)

echo "Starting datanodes on [$(echo "${workers}" | tr '\n' ' ' | sed 's/ $//')]"
if ! hpc_on_hosts "${workers}" "${hdfs[@]}" --daemon start datanode; then
  fail "HDFS not started: a datanode could not start (see above)"
fi
for w in ${workers}; do
  if hpc_is_local_host "${w}"; then
    local_daemons+=(datanode)
    break
  fi
done

if [[ "${HADOOP_HPC_START_SECONDARY:-true}" == "true" && -n "${snn_host}" ]]; then
  echo "Starting secondary namenode on [${snn_host}]"
  if ! hpc_on_hosts "${snn_host}" "${hdfs[@]}" --daemon start secondarynamenode; then
    fail "HDFS not started: the secondary namenode could not start (see above)"
  fi
  hpc_is_local_host "${snn_host}" && local_daemons+=(secondarynamenode)
fi

## Ready when the NameNode we started answers, is out of safe mode and sees every DataNode.
hdfs_ready() {
  local info live safemode ours=true
  HPC_STATE="namenode web UI http://${nn_http_host}:${nn_http_port} not answering yet"
  info=$(hpc_http_get "${nn_http_host}" "${nn_http_port}" \
    "/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo") || return 1
  [[ -n "${info}" ]] || return 1
  if hpc_is_local_host "${nn_host}"; then
    # the answer must come from the NameNode we started, not another cluster's
    [[ "$(hpc_jmx_pid "${nn_http_host}" "${nn_http_port}")" == "$(hpc_daemon_pid namenode)" ]] || ours=false
  fi
  live=$(hpc_http_get "${nn_http_host}" "${nn_http_port}" \
    "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" | hpc_json_number NumLiveDataNodes)
  live=${live:-0}
  if grep -q '"Safemode" *: *""' <<<"${info}"; then safemode=off; else safemode=on; fi
  HPC_STATE="safe mode ${safemode}, ${live}/${expected} datanodes live"
  [[ "${ours}" == "true" && "${safemode}" == "off" && "${live}" -ge "${expected}" ]] || return 1
  HPC_STATE="namenode hdfs://${nn_rpc} (web http://${nn_http_host}:${nn_http_port}), ${HPC_STATE}"
}

echo "Waiting for HDFS: namenode out of safe mode and ${expected} datanode(s) live (timeout ${HADOOP_HPC_START_TIMEOUT}s)"
hpc_wait_ready HDFS hdfs_ready "${local_daemons[@]}" ||
  fail "${HPC_WAIT_ERROR}; see the namenode and datanode logs in ${HADOOP_LOG_DIR} on each host"
