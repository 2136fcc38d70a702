#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# yarn-daemon.sh [--config DIR] (start|stop|status) COMMAND [ARGS...]: the Hadoop 2 way to
# start, stop or check one YARN daemon on this host; warns that it is deprecated and runs
# bin/yarn --daemon ACTION COMMAND.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_deprecated_daemon yarn yarn-daemon.sh "$@"
