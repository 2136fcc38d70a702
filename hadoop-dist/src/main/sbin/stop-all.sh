#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# stop-all.sh [--config DIR]: stop-yarn.sh, then stop-dfs.sh (unless fs.defaultFS is not
# hdfs://, as in the MapReduce over Lustre modes).
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_script_init "$@"
rc=0
"${HADOOP_HOME}/sbin/stop-yarn.sh" "$@" || rc=1
if hpc_uses_hdfs; then
  "${HADOOP_HOME}/sbin/stop-dfs.sh" "$@" || rc=1
fi
exit "${rc}"
