#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Builds the Soft-RoCE test VM used by dev-support/bin/test-rdma: a Debian bookworm root file
# system (debootstrap minbase + rdma-core, Debian's own kernel, OpenJDK 17 and the tools the
# native ctest suite calls), an ext4 image of it, and the kernel and initrd to boot it with.
# The sha256 of this file is the image's recipe: test-rdma rebuilds when it changes, so any
# change to what the image holds belongs in this file.
#
# Usage: build-image.sh OUTDIR     (as root; OUTDIR gets vmlinuz, initrd.img, root.img,
#                                   packages.txt and, last, recipe.sha256)
# Environment: HPC_VM_MIRROR, HPC_VM_SECURITY_MIRROR override the mirrors taken from the host's
# apt sources.
set -u

die() {
  echo "ERROR: build-image: $*" >&2
  exit 1
}

log() {
  printf '==> build-image [%4d s] %s\n' "$((SECONDS - t_start))" "$*"
}

[[ $# -eq 1 ]] || die "usage: build-image.sh OUTDIR"
[[ "$(id -u)" -eq 0 ]] || die "must run as root (debootstrap, chroot)"
out=$1
t_start=${SECONDS}
suite=bookworm
image_size=4G

# What the guest needs. Base: rdma-core's user space and tools (the notes' recipe). The rest
# lets every native ctest run in the guest as it does on the host (the CMake cache baked in the
# host paths of cmake, nm, valgrind, shellcheck and the JDK's jni.h).
base_packages=kmod,iproute2,rdma-core,ibverbs-utils,ibverbs-providers,rdmacm-utils,perftest,procps
chroot_packages=(linux-image-amd64 initramfs-tools openjdk-17-jre-headless
  openjdk-17-jdk-headless cmake gcc libc6-dev binutils libibverbs-dev librdmacm-dev
  zlib1g-dev valgrind shellcheck)

## host_mirror SUITE: the URI the host's apt uses for SUITE (deb822 and one-line sources alike).
host_mirror() {
  # shellcheck disable=SC2016 # apt's format fields, not shell expansions
  apt-get indextargets --format '$(REPO_URI) $(RELEASE) $(TARGET_OF)' 2>/dev/null |
    awk -v s="$1" '$2 == s && $3 == "deb" { print $1; exit }'
}

mirror=${HPC_VM_MIRROR:-$(host_mirror "${suite}")}
security_mirror=${HPC_VM_SECURITY_MIRROR:-$(host_mirror "${suite}-security")}
mirror=${mirror:-http://deb.debian.org/debian/}
security_mirror=${security_mirror:-http://deb.debian.org/debian-security/}

mkdir -p "${out}" || die "cannot create ${out}"
work=$(mktemp -d "${out}/build.XXXXXX") || die "cannot create a work directory in ${out}"
root="${work}/root"

cleanup() {
  local m
  for m in dev/pts dev proc sys; do
    mountpoint -q "${root}/${m}" 2>/dev/null && umount -l "${root}/${m}"
  done
  rm -rf "${work}"
}
trap cleanup EXIT

## in_chroot SECONDS COMMAND...: runs COMMAND in the new root with a clean environment.
in_chroot() {
  local limit=$1
  shift
  timeout "${limit}" chroot "${root}" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"
}

log "debootstrap ${suite} (minbase) from ${mirror}"
timeout 1200 debootstrap --variant=minbase --include="${base_packages}" \
  "${suite}" "${root}" "${mirror}" >"${work}/debootstrap.log" 2>&1 ||
  { tail -n 30 "${work}/debootstrap.log" >&2; die "debootstrap failed"; }

log "kernel, JDK and test tools in the chroot (${security_mirror} for security updates)"
cat >"${root}/etc/apt/sources.list" <<EOF
deb ${mirror} ${suite} main
deb ${mirror} ${suite}-updates main
deb ${security_mirror} ${suite}-security main
EOF
# No daemons start inside the chroot.
printf '#!/bin/sh\nexit 101\n' >"${root}/usr/sbin/policy-rc.d"
chmod 755 "${root}/usr/sbin/policy-rc.d"
if ! { mount -t proc proc "${root}/proc" && mount -t sysfs sys "${root}/sys" &&
  mount --bind /dev "${root}/dev" && mount --bind /dev/pts "${root}/dev/pts"; }; then
  die "cannot mount /proc, /sys, /dev in the chroot"
fi
{
  in_chroot 600 apt-get update -q &&
    in_chroot 1500 apt-get install -y -q --no-install-recommends "${chroot_packages[@]}" &&
    in_chroot 60 apt-get clean
} >"${work}/chroot.log" 2>&1 || { tail -n 30 "${work}/chroot.log" >&2; die "chroot install failed"; }
for m in dev/pts dev sys proc; do
  umount "${root}/${m}" || die "cannot unmount ${root}/${m}"
done
rm -f "${root}/usr/sbin/policy-rc.d"
# shellcheck disable=SC2016 # dpkg-query's format fields
in_chroot 60 dpkg-query -W -f '${Package} ${Version}\n' >"${work}/packages.txt"

log "stage-1 init"
# PID 1 until the repository share is mounted; then the repository's guest-init.sh takes over,
# so changing the guest scripts needs no image rebuild. The share's tag and mount point come
# from the kernel command line that test-rdma writes (hpc_repo=PATH).
cat >"${root}/sbin/hpc-init" <<'EOF'
#!/bin/sh
# Stage-1 init of the hadoop-hpc Soft-RoCE VM (written by dev-support/vm/build-image.sh).
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
repo=$(sed -n 's/.*hpc_repo=\([^ ]*\).*/\1/p' /proc/cmdline)
if [ -n "${repo}" ] && modprobe 9pnet_virtio && modprobe 9p && mkdir -p "${repo}" &&
  mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 hpcrepo "${repo}" &&
  [ -f "${repo}/dev-support/vm/guest-init.sh" ]; then
  exec /bin/bash "${repo}/dev-support/vm/guest-init.sh"
fi
echo "hpc-init: cannot mount the repository share (hpc_repo=${repo}); powering off"
echo o >/proc/sysrq-trigger
sleep 60
EOF
chmod 755 "${root}/sbin/hpc-init"
echo hpc-vm >"${root}/etc/hostname"

log "extracting kernel and initrd"
kernel=$(find "${root}/boot" -maxdepth 1 -name 'vmlinuz-*' | sort | tail -n 1)
initrd=$(find "${root}/boot" -maxdepth 1 -name 'initrd.img-*' | sort | tail -n 1)
[[ -n "${kernel}" && -n "${initrd}" ]] || die "no kernel or initrd in ${root}/boot"
if ! { cp "${kernel}" "${work}/vmlinuz" && cp "${initrd}" "${work}/initrd.img"; }; then
  die "cannot copy the kernel and initrd"
fi

log "ext4 image (${image_size}, sparse)"
if ! { truncate -s "${image_size}" "${work}/root.img" &&
  mkfs.ext4 -q -F -L hpc-root -d "${root}" "${work}/root.img"; }; then
  die "mkfs.ext4 failed"
fi

# Publish: the recipe hash goes last, so an interrupted build is never taken for a cached one.
rm -f "${out}/recipe.sha256"
for f in vmlinuz initrd.img root.img packages.txt; do
  mv -f "${work}/${f}" "${out}/${f}" || die "cannot move ${f} to ${out}"
done
sha256sum "${BASH_SOURCE[0]}" | cut -d ' ' -f 1 >"${out}/recipe.sha256"
log "done: ${out} (kernel $(basename "${kernel}"), $(du -sh --apparent-size "${out}/root.img" |
  cut -f 1) image, $(du -sh "${out}/root.img" | cut -f 1) used)"
