#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# start-balancer.sh [--config DIR] [BALANCER OPTIONS...] (e.g. -threshold 5): starts the HDFS
# balancer as a daemon on this host (bin/hdfs --daemon start balancer); stop-balancer.sh stops it.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_balancer start "$@"
