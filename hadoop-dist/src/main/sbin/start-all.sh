#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# start-all.sh [--config DIR]: start-dfs.sh, then start-yarn.sh; each waits for readiness.
# Without HDFS (fs.defaultFS not hdfs://, as in the MapReduce over Lustre modes) YARN only.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
if hpc_uses_hdfs; then
  "${HADOOP_HOME}/sbin/start-dfs.sh" "$@" || exit 1
else
  echo "fs.defaultFS=${HPC_CONF[fs.defaultFS]} is not HDFS: not starting HDFS"
fi
"${HADOOP_HOME}/sbin/start-yarn.sh" "$@" || exit 1
