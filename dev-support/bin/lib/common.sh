#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Shared by dev-support/bin/quickstart and dev-support/bin/test: prerequisites (installed with
# apt-get when root, else named), JAVA_HOME, building the tarball. Sourced, never run.

HPC_REPO=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../../.." && pwd -P)
HPC_VERSION=0.1.0
HPC_TARBALL="${HPC_REPO}/hadoop-dist/target/hadoop-hpc-${HPC_VERSION}.tar.gz"

dev_log() {
  printf '==> %s\n' "$*"
}

dev_die() {
  echo "ERROR: $*" >&2
  exit 1
}

## Installs (as root, with apt-get) or names what the build and the cluster need.
## Extra Debian packages may be passed as arguments (e.g. shellcheck for the tests).
dev_prerequisites() {
  local missing=() pkg
  command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
  command -v mvn >/dev/null 2>&1 || missing+=(maven)
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc)
  command -v make >/dev/null 2>&1 || missing+=(make)
  [[ -f /usr/include/infiniband/verbs.h ]] || missing+=(libibverbs-dev)
  [[ -f /usr/include/rdma/rdma_cma.h ]] || missing+=(librdmacm-dev)
  [[ -f /usr/include/zlib.h ]] || missing+=(zlib1g-dev) # libhadoop.so's CRC32
  command -v hostname >/dev/null 2>&1 || missing+=(hostname)
  for pkg in "$@"; do
    dpkg -s "${pkg}" >/dev/null 2>&1 || missing+=("${pkg}")
  done
  if [[ ${#missing[@]} -gt 0 ]]; then
    if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
      dev_log "installing ${missing[*]}"
      DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
        dev_die "apt-get update failed; install by hand: ${missing[*]}"
      DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        dev_die "apt-get install failed for: ${missing[*]}"
    else
      dev_die "missing: ${missing[*]}. Install them with: sudo apt-get install ${missing[*]}"
    fi
  fi
  if [[ -z "${JAVA_HOME:-}" ]]; then
    JAVA_HOME=$(readlink -f "$(command -v javac)")
    JAVA_HOME=${JAVA_HOME%/bin/javac}
  fi
  export JAVA_HOME
  local v
  v=$(sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "${JAVA_HOME}/release" 2>/dev/null)
  [[ -z "${v}" || "${v}" -ge 17 ]] ||
    dev_die "JAVA_HOME=${JAVA_HOME} is Java ${v}; hadoop-hpc needs 17 (apt-get install openjdk-17-jdk-headless)"
}

## True if the tarball is missing or older than any source file.
dev_tarball_stale() {
  [[ -f "${HPC_TARBALL}" ]] || return 0
  [[ -n "$(cd "${HPC_REPO}" && find . -path ./build -prune -o -path '*/target' -prune -o \
    -path ./.git -prune -o -type f -newer "${HPC_TARBALL}" -print -quit)" ]]
}

## mvn with the flags every caller wants.
dev_mvn() {
  (cd "${HPC_REPO}" && mvn -B --no-transfer-progress "$@")
}

## dev_hhh_fresh HOME: before formatting the HDFS of the unpacked tarball HOME, empties the
## [RAM_DISK] directories its hdfs-site.xml names (they live outside HOME, on a tmpfs, and a
## DataNode refuses a RAM disk left by an earlier cluster) and creates the stand-in for the
## Lustre directory of mode hhh-l (dfs.hpc.hhh.lustre.path).
dev_hhh_fresh() {
  local home=$1 dirs dir lustre
  dirs=$("${home}/bin/hdfs" getconf -confKey dfs.datanode.data.dir 2>/dev/null) ||
    dev_die "cannot read dfs.datanode.data.dir from ${home}/etc/hadoop"
  IFS=',' read -r -a dirs <<<"${dirs}"
  for dir in "${dirs[@]}"; do
    [[ "${dir}" == "[RAM_DISK]"* ]] || continue
    dir=${dir#\[RAM_DISK\]}
    dir=${dir#file://}
    [[ "${dir}" == /dev/shm/* ]] || dev_die "refusing to empty ${dir}: not under /dev/shm"
    rm -rf "${dir}"
  done
  lustre=$("${home}/bin/hdfs" getconf -confKey dfs.hpc.hhh.lustre.path 2>/dev/null) || true
  if [[ -n "${lustre}" ]]; then
    mkdir -p "${lustre}" || dev_die "cannot create the Lustre stand-in ${lustre}"
  fi
}
