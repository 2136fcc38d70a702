#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Shared by the dev-support/bench scripts: errors, the classpath of a built module or of an
# unpacked tarball, and the plots (bench_stats, bench_bars, bench_plot). Source it; it defines
# functions only.

BENCH_REPO=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../../.." && pwd -P)

bench_die() {
  echo "ERROR: $*" >&2
  exit 1
}

## bench_module_classpath MODULE PROBE: the classpath of MODULE (a path under the repository):
## its target/classes, then every dependency, this repository's modules as the jars in their
## target/ directories. Provided and test dependencies are included: benchmarks run the
## NodeManager and MiniDFSCluster side too.
## The list is kept in MODULE/target/bench.classpath. When PROBE (a path under target/classes)
## is missing, the list is missing or older than a pom.xml, or a jar it names is gone, MODULE
## and the modules it needs are packaged and the list resolved in one Maven run
## (`package dependency:build-classpath -pl MODULE -am`): sibling modules resolve to that run's
## own jars, so nothing is installed into ~/.m2 and no plugin beyond the quickstart's
## `mvn package` is needed (installing needed maven-install-plugin, which the quickstart never
## fetched: offline it failed with an ERROR before the online retry).
bench_module_classpath() {
  local module=$1 probe=$2 dir="${BENCH_REPO}/$1"
  local cpfile="${dir}/target/bench.classpath"
  if [[ ! -e "${dir}/target/classes/${probe}" ]] || ! bench_classpath_fresh "${cpfile}"; then
    echo "bench: building ${module} and the modules it needs (mvn package -DskipTests) ..." >&2
    mkdir -p "${dir}/target" || bench_die "cannot create ${dir}/target"
    rm -f "${cpfile}" "${cpfile}.new"
    # each module of the run writes its own list to the file, MODULE (built last) the final
    # one: kept only when the whole run succeeded, else an upstream module's list would stay
    if ! bench_mvn "${dir}/target/bench-mvn.log" package dependency:build-classpath \
      -DskipTests -Dnative.skip=true -Dmdep.outputFile="${cpfile}.new" \
      -Dmdep.includeScope=test -pl "${module}" -am; then
      rm -f "${cpfile}.new"
      bench_die "cannot build ${module} (Maven's output above)"
    fi
    [[ -s "${cpfile}.new" ]] || bench_die "Maven wrote no classpath for ${module}"
    mv "${cpfile}.new" "${cpfile}" || bench_die "cannot write ${cpfile}"
  fi
  printf '%s:%s' "${dir}/target/classes" "$(cat "${cpfile}")"
}

## bench_classpath_fresh CPFILE: true when CPFILE is there, no pom.xml of the repository is
## newer and every jar it names exists.
bench_classpath_fresh() {
  local cpfile=$1 entry
  [[ -s "${cpfile}" ]] || return 1
  [[ -z "$(find "${BENCH_REPO}" \( -path "${BENCH_REPO}/build" -o -name target -o -name .git \) \
    -prune -o -name pom.xml -newer "${cpfile}" -print -quit)" ]] || return 1
  while IFS= read -r -d ':' entry; do
    [[ -e "${entry}" ]] || return 1
  done < <(cat "${cpfile}"; printf ':')
}

## bench_mvn LOG ARGS...: Maven in the repository, offline first (the quickstart's build has
## fetched what it needs), online again only when the offline run missed an artifact. The
## output goes to LOG and to stderr only when Maven failed, so an offline miss that the online
## run mends prints no ERROR.
bench_mvn() {
  local log=$1
  shift
  (cd "${BENCH_REPO}" && mvn -B -q -o "$@") >"${log}" 2>&1 && return 0
  if grep -q 'offline mode' "${log}"; then
    (cd "${BENCH_REPO}" && mvn -B -q "$@") >>"${log}" 2>&1 && return 0
  fi
  grep -v '^\[INFO\]' "${log}" | tail -n 40 >&2
  echo "bench: the whole Maven output: ${log}" >&2
  return 1
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

## bench_stats ROWS STATS: ROWS holds one measurement a line, GROUP<TAB>VARIANT<TAB>VALUE (a
## round of one variant in one group: a file size, a job, ...). STATS gets one line per group
## and variant, in the order they first appear in ROWS: group index, variant index, median,
## minimum, maximum, rounds, group, variant (tab-separated): what bench_bars draws.
bench_stats() {
  awk -F '\t' 'BEGIN { ng = 0; nv = 0 }
    $3 !~ /^-?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?$/ { next }
    !($1 in gi) { gi[$1] = ng; gname[ng++] = $1 }
    !($2 in vi) { vi[$2] = nv; vname[nv++] = $2 }
    { k = gi[$1] "," vi[$2]; n[k]++; v[k, n[k]] = $3 + 0 }
    END {
      for (g = 0; g < ng; g++) {
        for (w = 0; w < nv; w++) {
          k = g "," w; c = n[k]
          if (!c) continue
          for (i = 1; i <= c; i++) s[i] = v[k, i]
          for (i = 2; i <= c; i++) {
            x = s[i]
            for (j = i - 1; j >= 1 && s[j] > x; j--) s[j + 1] = s[j]
            s[j + 1] = x
          }
          m = (c % 2) ? s[(c + 1) / 2] : (s[c / 2] + s[c / 2 + 1]) / 2
          printf "%d\t%d\t%.17g\t%.17g\t%.17g\t%d\t%s\t%s\n", g, w, m, s[1], s[c], c, gname[g], vname[w]
        }
      }
    }' "$1" >"$2"
}

## bench_bars STATS TITLE YLABEL [FORMAT]: gnuplot commands for one panel (of a multiplot):
## per group of STATS (bench_stats) a cluster of bars, one per variant, each at the median of its
## rounds with a whisker from the slowest to the fastest round and the median (printf FORMAT,
## default %.0f) above it. Stock is grey, the other variants keep one colour each per position.
bench_bars() {
  local stats=$1 title=$2 ylabel=$3 fmt=${4:-%.0f} groups=() variants=() g v label i
  local colours=("#1f77b4" "#ff7f0e" "#2ca02c" "#d62728" "#9467bd" "#8c564b") c=0 w cap xtics=""
  local lines=1 ink="lc rgb 'black' lw 1.5 notitle"
  title=${title//\'/\'\'} # a quote in gnuplot's single-quoted strings is written twice
  ylabel=${ylabel//\'/\'\'}
  while IFS=$'\t' read -r g v _ _ _ _ label i; do
    groups[g]=${label}
    variants[v]=${i}
  done <"${stats}"
  if [[ ${#groups[@]} -eq 0 ]]; then
    echo "set title '${title} (no rounds)'; plot [0:1][0:1] 1/0 notitle"
    return 0
  fi
  for ((i = 0; i < ${#groups[@]}; i++)); do
    xtics="${xtics:+${xtics}, }\"${groups[i]}\" ${i}"
    g=${groups[i]//[^\\]/}
    [[ $((${#g} + 1)) -gt ${lines} ]] && lines=$((${#g} + 1)) # a \n in a label is a line break
  done
  w=$(awk -v n="${#variants[@]}" 'BEGIN { printf "%.4f", 0.8 / n }')
  cap=$(awk -v w="${w}" 'BEGIN { printf "%.4f", w * 0.2 }')
  echo "set title '${title}'; set ylabel '${ylabel}'; unset xlabel"
  echo "set datafile separator tab; set grid noxtics ytics"
  # the key inside, above the bars: room at the top for one line per variant
  echo "set key inside top left vertical Left reverse opaque samplen 1.5"
  echo "set xtics (${xtics}) nomirror scale 0; set xrange [-0.5:$((${#groups[@]} - 1)).5]"
  echo "set yrange [0:*]; set offsets 0, 0, graph 0.$((12 + 8 * ${#variants[@]})), 0"
  echo "set bmargin $((lines + 2))"
  echo "set boxwidth $(awk -v w="${w}" 'BEGIN { printf "%.4f", w * 0.9 }') absolute"
  echo "set style fill solid 0.8 border rgb 'black'"
  printf "x(g, v) = g + (v - %s / 2.0) * %s\n" "$((${#variants[@]} - 1))" "${w}"
  printf "plot "
  for ((i = 0; i < ${#variants[@]}; i++)); do
    if [[ "${variants[i]}" == "stock" ]]; then
      label="#9a9a9a"
    else
      label=${colours[c % ${#colours[@]}]}
      c=$((c + 1))
    fi
    printf "'%s' using (\$2 == %d ? x(\$1, \$2) : 1/0):3 with boxes lc rgb '%s' title '%s', " \
      "${stats}" "${i}" "${label}" "${variants[i]}"
  done
  # whiskers as vectors: yerrorbars leave a gap around the median's point
  printf "'%s' using (x(\$1, \$2)):4:(0):(\$5 - \$4) with vectors nohead %s, " "${stats}" "${ink}"
  printf "'%s' using (x(\$1, \$2) - %s):4:(2 * %s):(0) with vectors nohead %s, " \
    "${stats}" "${cap}" "${cap}" "${ink}"
  printf "'%s' using (x(\$1, \$2) - %s):5:(2 * %s):(0) with vectors nohead %s, " \
    "${stats}" "${cap}" "${cap}" "${ink}"
  printf "'%s' using (x(\$1, \$2)):5:(sprintf('%s', \$3)) with labels offset 0,0.8 font ',9' notitle\n" \
    "${stats}" "${fmt}"
}

## bench_bytes SIZE: 4k, 64m, 2g or a plain number -> bytes.
bench_bytes() {
  awk -v s="$1" 'BEGIN {
    n = s + 0; u = tolower(substr(s, length(s)))
    if (u == "k") n *= 1024; else if (u == "m") n *= 1048576; else if (u == "g") n *= 1073741824
    printf "%.0f\n", n }'
}
