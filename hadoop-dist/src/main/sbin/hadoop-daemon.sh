#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# hadoop-daemon.sh [--config DIR] (start|stop|status) COMMAND [ARGS...]: the Hadoop 2 way to
# start, stop or check one HDFS daemon on this host, kept for scripts that still call it. As in
# Apache Hadoop 3 it warns that it is deprecated and runs bin/hdfs --daemon ACTION COMMAND.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_deprecated_daemon hdfs hadoop-daemon.sh "$@"
