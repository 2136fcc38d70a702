#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# start-all.sh [--config DIR]: start-dfs.sh, then start-yarn.sh; each waits for readiness.
set -u
sbin=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
"${sbin}/start-dfs.sh" "$@" || exit 1
"${sbin}/start-yarn.sh" "$@" || exit 1
