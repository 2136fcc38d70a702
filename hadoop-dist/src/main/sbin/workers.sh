#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# workers.sh [--config DIR] [--hostnames "h1 h2"] COMMAND...
# Runs COMMAND on every host of etc/hadoop/workers (or --hostnames): over ssh for remote hosts,
# directly for this machine. Fails if it failed on any host.
set -u
# shellcheck source=../libexec/hpc-functions.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/libexec/hpc-functions.sh"

hpc_home
hpc_parse_args "$@"
hpc_load_env
if [[ ${#HPC_ARGV[@]} -eq 0 ]]; then
  hpc_error "usage: workers.sh [--config confdir] [--hostnames \"h1 h2\"] command..."
  exit 1
fi
hosts=${HPC_HOSTNAMES}
[[ -n "${hosts}" ]] || hosts=$(hpc_workers) || exit 1
hpc_on_hosts "${hosts}" "${HPC_ARGV[@]}"
