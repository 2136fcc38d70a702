#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# stop-all.sh [--config DIR]: stop-yarn.sh, then stop-dfs.sh.
set -u
sbin=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
rc=0
"${sbin}/stop-yarn.sh" "$@" || rc=1
"${sbin}/stop-dfs.sh" "$@" || rc=1
exit "${rc}"
