#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# docs-commands.sh HADOOP_HOME [DOC...]: every command the documentation shows must exist.
# Reads the code of DOCs (default: README.md, every docs/**/*.md, the tarball's
# share/hadoop-hpc/README.md): fenced blocks and `inline code`. Checks
#   - bin/hadoop, hdfs, yarn, mapred SUBCOMMAND: the subcommand is in that command's usage (a
#     class name, a placeholder or an option is not a subcommand);
#   - sbin/SCRIPT and dev-support/{bin,bench,test}/SCRIPT: the script exists (in HADOOP_HOME, in
#     the repository) and every --option shown after it is one the script (or the shell library
#     it sources) handles;
#   - the common options shown with bin commands (--config, --debug, ...) are parsed by
#     libexec/hpc-functions.sh.
# Prints one line per command checked and a summary; exits 1 when any is missing. No JVM runs:
# the usages are the scripts' own.
set -u

home=${1:?usage: docs-commands.sh HADOOP_HOME [DOC...]}
shift
repo=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)
docs=("$@")
if [[ ${#docs[@]} -eq 0 ]]; then
  mapfile -t docs < <(find "${repo}/docs" -name '*.md' | sort)
  docs=("${repo}/README.md" "${docs[@]}" "${home}/share/hadoop-hpc/README.md")
fi
checked=0
failed=0
declare -A seen=() usage=()

bad() {
  failed=$((failed + 1))
  echo "  FAIL $*"
}

## The code of a markdown file, one snippet per line: fenced lines, and each `inline span`;
## spans of a paragraph that starts "Deliberately absent" come as "ABSENT <span>".
code_of() {
  awk '
    /^ *```/ { fenced = !fenced; next }
    fenced { print; next }
    /^Deliberately absent/ { absent = 1 }
    /^ *$/ { absent = 0 }
    {
      line = $0
      while (match(line, /`[^`]+`/)) {
        print (absent ? "ABSENT " : "") substr(line, RSTART + 1, RLENGTH - 2)
        line = substr(line, RSTART + RLENGTH)
      }
    }' "$1"
}

## Reads the usage text of bin/PROG (printed without a JVM when no subcommand is given) into
## usage[PROG]; exits when there is none (JAVA_HOME unset, a broken install).
read_usage() {
  [[ -n "${usage[$1]:-}" ]] && return 0
  usage[$1]=$("${home}/bin/$1" 2>&1)
  if ! grep -q '^Usage: ' <<<"${usage[$1]}"; then
    echo "docs-commands: bin/$1 printed no usage: ${usage[$1]}" >&2
    exit 1
  fi
}

## Whether the script at PATH, or the shell libraries it sources, handles OPTION.
handles_option() {
  local script=$1 opt=$2 f
  for f in "${script}" "${home}/libexec/hpc-functions.sh" "${repo}/dev-support/bin/lib/"*.sh \
    "${repo}/dev-support/bench/"*common*; do
    [[ -f "${f}" ]] && grep -qF -- "${opt}" "${f}" && return 0
  done
  return 1
}

check_options() {
  local script=$1 rest=$2 opt
  while read -r opt; do
    [[ -n "${opt}" ]] || continue
    handles_option "${script}" "${opt}" || bad "${script##*/} has no option ${opt} (docs: ${rest})"
  done < <(grep -oE '(^| )--[a-z][a-z0-9-]*' <<<"${rest}")
}

## One `bin/PROG ARGS` occurrence: common options, then the subcommand.
check_bin() {
  local prog=$1 args=$2 words i w sub=""
  read -r -a words <<<"${args}"
  for ((i = 0; i < ${#words[@]}; i++)); do
    w=${words[i]}
    case "${w}" in
      --config | --loglevel | --daemon | --hosts | --hostnames) i=$((i + 1)) ;;
      --workers | --debug) ;;
      --*) handles_option "${home}/libexec/hpc-functions.sh" "${w}" ||
        bad "bin/${prog}: option ${w} is not parsed (docs: ${prog} ${args})" ;;
      *) sub=${w}; break ;;
    esac
  done
  # only plain lower-case words are subcommands: not classes, placeholders, or prose
  [[ "${sub}" =~ ^[a-z][a-zA-Z0-9]*$ ]] || return 0
  checked=$((checked + 1))
  local listed=false
  read_usage "${prog}"
  grep -qE "(^|[ |])${sub}([ |]|$)" <<<"${usage[${prog}]}" && listed=true
  if [[ "${absent}" == "true" ]]; then
    if [[ "${listed}" == "false" ]]; then
      echo "  ok   bin/${prog} ${sub}: absent, as the docs say"
    else
      bad "bin/${prog} ${sub}: the docs list it as deliberately absent, but it is in the usage"
    fi
  elif [[ "${listed}" == "true" ]]; then
    echo "  ok   bin/${prog} ${sub}"
  else
    bad "bin/${prog} ${sub}: not a subcommand in its usage (docs: ${prog} ${args})"
  fi
}

check_snippet() {
  local s=$1 rest prog whole
  # bin commands, written bin/hdfs ... or hdfs ... at the start of a command
  while [[ "${s}" =~ (^\ *|bin/|[\;\|\&\(]\ *)(hadoop|hdfs|yarn|mapred)\ +([^\;\|\&\)]*) ]]; do
    whole=${BASH_REMATCH[0]}
    prog=${BASH_REMATCH[2]}
    rest=${BASH_REMATCH[3]}
    s=${s#*"${whole}"}
    check_bin "${prog}" "${rest}"
  done
}

check_scripts() {
  local s=$1 path rest key file
  while [[ "${s}" =~ (sbin|dev-support/(bin|bench|test))/([A-Za-z][A-Za-z0-9._/-]*[A-Za-z0-9])([^\;\|\&]*) ]]; do
    path=${BASH_REMATCH[1]}/${BASH_REMATCH[3]}
    rest=${BASH_REMATCH[4]}
    s=${s#*"${BASH_REMATCH[0]}"}
    key="${path} ${rest}"
    [[ -n "${seen[${key}]:-}" ]] && continue
    seen[${key}]=1
    checked=$((checked + 1))
    if [[ "${path}" == sbin/* ]]; then
      file=${home}/${path}
    else
      file=${repo}/${path}
    fi
    if [[ ! -f "${file}" ]]; then
      bad "${path}: no such script"
      continue
    fi
    echo "  ok   ${path}${rest:+ (options checked)}"
    check_options "${file}" "${rest}"
  done
}

for doc in "${docs[@]}"; do
  [[ -f "${doc}" ]] || { bad "${doc}: no such document"; continue; }
  echo "== ${doc#"${repo}/"}"
  while IFS= read -r snippet; do
    [[ -n "${seen["S ${snippet}"]:-}" ]] && continue
    seen["S ${snippet}"]=1
    absent=false
    if [[ "${snippet}" == "ABSENT "* ]]; then
      absent=true
      snippet=${snippet#ABSENT }
    fi
    check_scripts "${snippet}"
    check_snippet "${snippet}"
  done < <(code_of "${doc}")
done
echo "docs-commands: ${checked} commands checked, ${failed} missing"
[[ ${failed} -eq 0 ]]
