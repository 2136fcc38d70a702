#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# stop-balancer.sh [--config DIR]: stops the HDFS balancer daemon of this host.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_home
conf=()
if [[ "${1:-}" == "--config" ]]; then
  conf=(--config "${2:?--config needs a directory}")
  shift 2
fi
exec "${HADOOP_HOME}/bin/hdfs" "${conf[@]}" --daemon stop balancer
