#!/bin/sh
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Fails the rdma-native build up front, with one actionable line, when the native toolchain is
# missing; otherwise CMake would stop later with a much less helpful error.
# Usage: check-native-deps.sh [JAVA_HOME]   (CC selects the compiler, default cc)
set -eu

java_home=${1:-${JAVA_HOME:-}}
cc=${CC:-cc}
missing=""

add_missing() {
  missing="${missing:+${missing}, }$1"
}

# has_header HEADER: true when the C compiler's preprocessor finds HEADER.
has_header() {
  printf '#include <%s>\n' "$1" | "${cc}" -E -x c - >/dev/null 2>&1
}

command -v cmake >/dev/null 2>&1 || add_missing "cmake"

if command -v "${cc}" >/dev/null 2>&1; then
  has_header infiniband/verbs.h || add_missing "libibverbs-dev (infiniband/verbs.h)"
  has_header rdma/rdma_cma.h || add_missing "librdmacm-dev (rdma/rdma_cma.h)"
  has_header zlib.h || add_missing "zlib1g-dev (zlib.h)"
else
  add_missing "a C compiler (${cc})"
fi

if [ -n "${java_home}" ] && [ ! -f "${java_home}/include/jni.h" ]; then
  add_missing "a JDK with include/jni.h (JAVA_HOME=${java_home})"
fi

if [ -n "${missing}" ]; then
  echo "rdma-native: missing ${missing}: apt-get install libibverbs-dev librdmacm-dev zlib1g-dev cmake gcc," \
    "or build Java only with -Dnative.skip=true" >&2
  exit 1
fi
