#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# mr-jobhistory-daemon.sh [--config DIR] (start|stop|status) historyserver: the Hadoop 2 way to
# run the JobHistoryServer; warns that it is deprecated and runs bin/mapred --daemon ACTION
# historyserver.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_deprecated_daemon mapred mr-jobhistory-daemon.sh "$@"
