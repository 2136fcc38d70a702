#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Shared by the scripts that run inside the Soft-RoCE VM (guest-run-tests.sh, guest-job.sh):
# progress lines stamped with the guest's uptime and key=value results. Sourced, never run; the
# sourcing script sets "results" to the results file (OUT/results.env).

now() {
  cut -d ' ' -f 1 /proc/uptime
}

say() {
  printf 'hpc-vm [%6.1f s] %s\n' "$(now)" "$*"
}

result() {
  printf '%s=%s\n' "$1" "$2" >>"${results:?the sourcing script sets results}"
}

## elapsed SINCE: seconds since the uptime SINCE, one decimal.
elapsed() {
  awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}
