#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# docs-check.sh: the documentation is a true and current map of the repository.
#   - docs-check.py: the map's size (docs/architecture.md at most 200 lines, table cells of at
#     most three lines), every class and path the docs name exists, no history ("session N",
#     "issue N") in the docs or in code comments; and its self-test on a planted bad document;
#   - dev-support/bin/docs --check: every picture in docs/diagrams is rendered from its
#     Graphviz source as checked in;
#   - docs-keys.py: every configuration key the docs show is in a *-default.xml, with the
#     default the XML gives.
# The documented commands are checked against the built tarball by docs-commands.sh in the
# end-to-end test. Needs the Maven build first (Hadoop's jars in the local repository).
# Exits 1 when any check fails.
set -u
here=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd -P -- "${here}/../.." && pwd -P)
failed=()

check() {
  local name=$1
  shift
  echo "== ${name}"
  if "$@"; then
    echo "ok    ${name}"
  else
    echo "FAIL  ${name}"
    failed+=("${name}")
  fi
}

check "docs-check finds what it should (self-test)" python3 "${here}/docs-check.py" --self-test
check "docs name only what exists; the map fits; no history" python3 "${here}/docs-check.py"
check "diagrams rendered from their sources" bash "${repo}/dev-support/bin/docs" --check
check "documented keys and defaults match the XML" python3 "${here}/docs-keys.py"

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "docs-check: FAILED: ${failed[*]}"
  exit 1
fi
echo "docs-check: all passed"
