#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Shared by the dev-support/bench scripts: errors, and the classpath of a built module or of an
# unpacked tarball. Source it; it defines functions only.

BENCH_REPO=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../../.." && pwd -P)

bench_die() {
  echo "ERROR: $*" >&2
  exit 1
}

## bench_module_classpath MODULE PROBE: the classpath of MODULE (a path under the repository),
## building it offline (with the modules it needs) when PROBE, a path under its
## target/classes, is missing. Provided and test dependencies are included: benchmarks run
## the NodeManager side too.
bench_module_classpath() {
  local module=$1 probe=$2 dir="${BENCH_REPO}/$1"
  local cpfile="${dir}/target/bench.classpath"
  if [[ ! -e "${dir}/target/classes/${probe}" ]]; then
    (cd "${BENCH_REPO}" && mvn -B -q -o install -DskipTests -Dnative.skip=true \
      -pl "${module}" -am) >&2 || bench_die "cannot build ${module} (mvn install failed)"
  fi
  if [[ ! -s "${cpfile}" || "${dir}/pom.xml" -nt "${cpfile}" ]]; then
    (cd "${BENCH_REPO}" && mvn -B -q -o dependency:build-classpath \
      -Dmdep.outputFile="${cpfile}" -Dmdep.includeScope=test -pl "${module}") >&2 ||
      bench_die "cannot resolve the classpath (mvn dependency:build-classpath failed)"
  fi
  printf '%s:%s' "${dir}/target/classes" "$(cat "${cpfile}")"
}

## bench_tarball_classpath DIR: every jar under an unpacked tarball's share/ directory.
bench_tarball_classpath() {
  local dir=$1 cp="" jar
  [[ -d "${dir}/share" ]] || bench_die "${dir} has no share/ directory (not an unpacked tarball?)"
  while IFS= read -r -d '' jar; do
    cp="${cp:+${cp}:}${jar}"
  done < <(find "${dir}/share" -name '*.jar' ! -name '*-tests.jar' ! -name '*-sources.jar' -print0)
  [[ -n "${cp}" ]] || bench_die "no jars under ${dir}/share"
  printf '%s' "${cp}"
}

## bench_java: the java command (JAVA_HOME's when set).
bench_java() {
  local java="${JAVA_HOME:+${JAVA_HOME}/bin/}java"
  command -v "${java}" >/dev/null 2>&1 || bench_die "no java (set JAVA_HOME)"
  printf '%s' "${java}"
}
