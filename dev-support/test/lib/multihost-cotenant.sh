# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# The multi-host lane's co-tenant: a second Unix user with processes of its own on the lane's
# hosts, as every other user of a shared HPC machine has, attacking the owner's per-job cluster.
# Sourced by multihost.sh; uses its helpers (ns, addr, pass/fail, await_line, die) and WORKERS,
# work, HPC_LANE_LIB.
#
# What it does today: before the cluster starts, it holds the first port of the hpc shuffle's
# range on every worker (the stock shuffle port + 1) and relays whatever connects to the next
# port, where the NodeManager's service then listens. The service MACs the port it listens on
# into every answer, so a reducer that reached it through the relay refuses the answer and
# tries the next port: the owner's strict TeraSort must succeed with every byte over the hpc
# shuffle while the relay shows that reducers did connect to it.

COTENANT=hpcmh-co
# The stock shuffle port (mapreduce.shuffle.port, the lane keeps the default) and so the hpc
# shuffle's first port (mapreduce.hpc.shuffle.port 0: the stock port + 1).
STOCK_SHUFFLE_PORT=13562

## cotenant_up: the co-tenant's Unix user (a system user without a home or a login shell).
cotenant_up() {
  id -u "${COTENANT}" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "${COTENANT}" ||
    die "cannot create the co-tenant user ${COTENANT}"
  mkdir -p "${work}/cotenant"
}

## as_cotenant NODE COMMAND...: COMMAND on NODE (its network namespace) as the co-tenant, with
## none of the owner's groups or environment.
as_cotenant() {
  local node=$1
  shift
  ip netns exec "$(ns "${node}")" setpriv --reuid="${COTENANT}" --regid="${COTENANT}" \
    --clear-groups -- env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/nonexistent "$@"
}

## cotenant_relays_up: on every worker, the co-tenant's relay from the hpc shuffle's first port
## to the next one, started before the NodeManagers; waits until each one listens.
cotenant_relays_up() {
  local node log first=$((STOCK_SHUFFLE_PORT + 1))
  for node in "${WORKERS[@]}"; do
    log="${work}/cotenant/relay-${node}.log"
    as_cotenant "${node}" python3 - 0.0.0.0 "${first}" "$(addr "${node}")" "$((first + 1))" \
      <"${HPC_LANE_LIB}/tcp-relay.py" >"${log}" 2>&1 &
  done
  for node in "${WORKERS[@]}"; do
    log="${work}/cotenant/relay-${node}.log"
    await_line "${log}" '^relaying' 10 &&
      pass "co-tenant ${COTENANT} holds ${node}:${first} (the hpc shuffle's first port) and relays it to ${first}+1" ||
      fail "co-tenant relay on ${node}:${first}" "$(cat "${log}" 2>/dev/null)"
  done
}

## cotenant_relays_check JOB_OK: after the owner's strict TeraSort (JOB_OK true when it passed
## with every byte over the hpc shuffle): reducers reached the relays, and no map output came
## back through them (each relayed connection ended after the open's refusal, a few dozen
## bytes, where a partition of the lane's TeraSort is megabytes).
cotenant_relays_check() {
  local job_ok=$1 connections most
  connections=$(cat "${work}"/cotenant/relay-*.log 2>/dev/null | grep -c '^connection ')
  most=$(cat "${work}"/cotenant/relay-*.log 2>/dev/null |
    sed -n 's/.*, \([0-9]*\) bytes out$/\1/p' | sort -n | tail -n 1)
  echo "    what the co-tenant's relays saw:"
  cat "${work}"/cotenant/relay-*.log 2>/dev/null | sed 's/^/      /' | tail -n 12
  [[ "${connections}" -gt 0 && "${most:-0}" -lt 4096 && "${job_ok}" == true ]] &&
    pass "reducers reached the co-tenant's relays ${connections} times, got at most ${most} bytes back through them (a refusal), and fetched every byte from the service's own port" ||
    fail "the relay attack was tried and refused (connections ${connections}, most bytes back ${most:-none}, job ok ${job_ok})"
}
