#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# stop-dfs.sh [--config DIR]: stops the DataNodes, the Secondary NameNode and the NameNode
# (TERM, then KILL after HADOOP_STOP_TIMEOUT seconds), wherever they run.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
hpc_conf_load fs.defaultFS dfs.namenode.rpc-address dfs.namenode.secondary.http-address
nn_rpc=${HPC_CONF[dfs.namenode.rpc-address]}
if [[ -z "${nn_rpc}" ]]; then
  nn_rpc=${HPC_CONF[fs.defaultFS]#hdfs://}
  nn_rpc=${nn_rpc%%/*}
fi
nn_host=$(hpc_addr_host "${nn_rpc}")
[[ -n "${nn_host}" ]] || nn_host=localhost
snn_host=$(hpc_addr_host "${HPC_CONF[dfs.namenode.secondary.http-address]}")
[[ -z "${snn_host}" || "${snn_host}" == "0.0.0.0" ]] && snn_host=${nn_host}
workers=$(hpc_workers) || exit 1
hdfs=("${HADOOP_HOME}/bin/hdfs" --config "${HADOOP_CONF_DIR}")

rc=0
echo "Stopping datanodes"
hpc_on_hosts "${workers}" "${hdfs[@]}" --daemon stop datanode || rc=1
echo "Stopping secondary namenode on [${snn_host}]"
hpc_on_hosts "${snn_host}" "${hdfs[@]}" --daemon stop secondarynamenode || rc=1
echo "Stopping namenode on [${nn_host}]"
hpc_on_hosts "${nn_host}" "${hdfs[@]}" --daemon stop namenode || rc=1
exit "${rc}"
