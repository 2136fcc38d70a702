#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# stop-yarn.sh [--config DIR]: stops the JobHistoryServer, the NodeManagers (which end their
# containers) and the ResourceManager.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
hpc_conf_load yarn.resourcemanager.address mapreduce.jobhistory.address
rm_host=$(hpc_addr_host "${HPC_CONF[yarn.resourcemanager.address]}")
jhs_host=$(hpc_addr_host "${HPC_CONF[mapreduce.jobhistory.address]}")
[[ "${jhs_host}" == "0.0.0.0" ]] && jhs_host=${rm_host}
workers=$(hpc_workers) || exit 1

rc=0
echo "Stopping historyserver on [${jhs_host}]"
hpc_on_hosts "${jhs_host}" "${HADOOP_HOME}/bin/mapred" --config "${HADOOP_CONF_DIR}" \
  --daemon stop historyserver || rc=1
echo "Stopping nodemanagers"
hpc_on_hosts "${workers}" "${HADOOP_HOME}/bin/yarn" --config "${HADOOP_CONF_DIR}" \
  --daemon stop nodemanager || rc=1
echo "Stopping resourcemanager on [${rm_host}]"
hpc_on_hosts "${rm_host}" "${HADOOP_HOME}/bin/yarn" --config "${HADOOP_CONF_DIR}" \
  --daemon stop resourcemanager || rc=1
exit "${rc}"
