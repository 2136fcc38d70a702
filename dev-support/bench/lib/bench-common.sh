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

## bench_module_classpath MODULE PROBE: the classpath of MODULE (a path under the repository).
## When PROBE, a path under its target/classes, is missing, or the modules it needs are not in
## the local Maven repository (after the quickstart's `mvn package` they are built, not
## installed), installs MODULE and the modules it needs first (-DskipTests). Provided and test
## dependencies are included: benchmarks run the NodeManager side too.
bench_module_classpath() {
  local module=$1 probe=$2 dir="${BENCH_REPO}/$1"
  local cpfile="${dir}/target/bench.classpath"
  if [[ ! -e "${dir}/target/classes/${probe}" ]] || ! bench_resolve "${module}" "${cpfile}" 2>/dev/null; then
    echo "bench: installing ${module} and the modules it needs (mvn install -DskipTests) ..." >&2
    bench_mvn install -DskipTests -Dnative.skip=true -pl "${module}" -am ||
      bench_die "cannot build ${module} (mvn install failed)"
    bench_resolve "${module}" "${cpfile}" ||
      bench_die "cannot resolve the classpath of ${module} (mvn dependency:build-classpath failed)"
  fi
  printf '%s:%s' "${dir}/target/classes" "$(cat "${cpfile}")"
}

## bench_resolve MODULE CPFILE: writes MODULE's classpath to CPFILE unless it is there and
## newer than the module's pom; fails (Maven's messages on stderr) when a dependency cannot be
## resolved.
bench_resolve() {
  local module=$1 cpfile=$2
  [[ -s "${cpfile}" && ! "${BENCH_REPO}/${module}/pom.xml" -nt "${cpfile}" ]] && return 0
  rm -f "${cpfile}"
  bench_mvn dependency:build-classpath -Dmdep.outputFile="${cpfile}" \
    -Dmdep.includeScope=test -pl "${module}" && [[ -s "${cpfile}" ]]
}

## bench_mvn ARGS...: Maven in the repository, quiet, offline first (the build has fetched
## what it needs), then online for a plugin the build never used.
bench_mvn() {
  (cd "${BENCH_REPO}" && { mvn -B -q -o "$@" || mvn -B -q "$@"; }) >&2
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

## bench_gnuplot: true when gnuplot can run, installing gnuplot-nox as root when missing;
## otherwise warns (no PNG) and returns 1.
bench_gnuplot() {
  command -v gnuplot >/dev/null 2>&1 && return 0
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q \
      --no-install-recommends gnuplot-nox \
      >/dev/null 2>&1
  fi
  command -v gnuplot >/dev/null 2>&1 && return 0
  echo "WARNING: no gnuplot (sudo apt-get install gnuplot-nox): no PNG plot" >&2
  return 1
}

## bench_log4j: a log4j 1.x configuration that keeps Hadoop's in-process daemons to warnings, so
## a benchmark's output is its own lines.
bench_log4j() {
  printf '%s' "${BENCH_REPO}/dev-support/bench/lib/log4j-quiet.properties"
}

## bench_plot GP PNG: draws PNG with the gnuplot script GP when gnuplot can run (installed when
## missing, as root); prints where the plot is, or why there is none.
bench_plot() {
  local gp=$1 png=$2
  bench_gnuplot || return 0
  if gnuplot "${gp}" 2>"${png%.png}.gnuplot.log"; then
    echo "plot: ${png}"
  else
    echo "WARNING: gnuplot failed: ${png%.png}.gnuplot.log" >&2
  fi
}

## bench_bytes SIZE: 4k, 64m, 2g or a plain number -> bytes.
bench_bytes() {
  awk -v s="$1" 'BEGIN {
    n = s + 0; u = tolower(substr(s, length(s)))
    if (u == "k") n *= 1024; else if (u == "m") n *= 1048576; else if (u == "g") n *= 1073741824
    printf "%.0f\n", n }'
}
