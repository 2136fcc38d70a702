#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# PID 1 of the Soft-RoCE test VM, exec'd by the image's stage-1 init (/sbin/hpc-init) once the
# repository share is mounted. Sets up what a minbase system without systemd lacks, brings up
# eth0 and the rxe0 Soft-RoCE device on it, runs guest-run-tests.sh (or the --shell-cmd
# script), leaves the verdict in the shared repository and powers the VM off.
#
# Kernel command line (written by dev-support/bin/test-rdma):
#   hpc_repo=PATH  the repository, shared with 9p tag hpcrepo at the host's path
#   hpc_m2=PATH    the host's Maven repository, shared read-only with tag hpcm2 at the same path
#   hpc_out=PATH   where results go (inside the repository share)
#   hpc_mode=test|shell  run the test runner, or PATH/shell-cmd.sh
#   hpc_job=hdfs|terasort  the whole job guest-job.sh runs
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C.UTF-8

cmdline_value() {
  sed -n "s/.*\\b$1=\\([^ ]*\\).*/\\1/p" /proc/cmdline
}

say() {
  printf 'hpc-vm [%6.1f s] %s\n' "$(cut -d ' ' -f 1 /proc/uptime)" "$*"
}

power_off() {
  sync
  # Quiet the harmless I/O errors of reads racing the power-off.
  dmesg -n 1
  echo o >/proc/sysrq-trigger
  sleep 60
}

repo=$(cmdline_value hpc_repo)
m2=$(cmdline_value hpc_m2)
out=$(cmdline_value hpc_out)
mode=$(cmdline_value hpc_mode)
# the whole job's kind (guest-job.sh): hdfs, or terasort (test-rdma --job)
HPC_VM_JOB=$(cmdline_value hpc_job)
export HPC_VM_JOB
say "init started (kernel $(uname -r))"
echo "boot_seconds=$(cut -d ' ' -f 1 /proc/uptime)" >"${out}/guest-boot.env"

mkdir -p /dev/pts /dev/shm
mountpoint -q /dev/pts || mount -t devpts -o gid=5,mode=620 devpts /dev/pts
mountpoint -q /dev/shm || mount -t tmpfs -o mode=1777 shm /dev/shm
mountpoint -q /run || mount -t tmpfs -o mode=755 run /run
# /tmp stays on the root disk (ext4 under QEMU's -snapshot, so nothing outlives the run). No
# tmpfs: it would hide the repository share when a clone lives under /tmp, and the guest's
# kernel (6.1) has no user xattrs on tmpfs, which the Lustre test double keeps layouts in.
hostname hpc-vm
# A minbase image has no /etc/hosts: without it "localhost" does not resolve.
cat >/etc/hosts <<EOF
127.0.0.1 localhost
10.0.2.15 hpc-vm
::1 localhost ip6-localhost ip6-loopback
EOF
echo "nameserver 10.0.2.3" >/etc/resolv.conf

if [[ -n "${m2}" ]]; then
  mkdir -p "${m2}"
  # cache=loose: the guest's page cache keeps what it read of the jars (read-only here, and
  # no build changes them while the VM runs). Without it every read of a jar is a round trip
  # to the host: a JVM on the tests' classpath started in 21 s instead of 9-12 s (measured).
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro,cache=loose hpcm2 "${m2}" ||
    say "WARNING: cannot mount the Maven repository share at ${m2}"
fi

# User-mode networking: QEMU's slirp answers at 10.0.2.2 (gateway) and 10.0.2.3 (DNS), the guest
# is 10.0.2.15. The address goes on before the rxe link is added: rxe then finds an up netdev
# with an IPv4 address and its port comes up ACTIVE with the IPv4-mapped GID at index 1.
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
modprobe rdma_rxe || say "ERROR: modprobe rdma_rxe failed"
rdma link add rxe0 type rxe netdev eth0 || say "ERROR: rdma link add rxe0 failed"
say "network up: $(ip -brief addr show eth0 | tr -s ' ') / $(rdma link show 2>&1 | head -n 1)"

rc=0
case "${mode}" in
  shell)
    say "running ${out}/shell-cmd.sh"
    bash "${out}/shell-cmd.sh" 2>&1 | tee "${out}/guest.log"
    rc=${PIPESTATUS[0]}
    ;;
  *)
    bash "${repo}/dev-support/vm/guest-run-tests.sh" "${repo}" "${out}" 2>&1 |
      tee "${out}/guest.log"
    rc=${PIPESTATUS[0]}
    ;;
esac
echo "guest_rc=${rc}" >"${out}/guest-done.env"
say "done (exit ${rc}); powering off"
power_off
