# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Assertions of the shell tests (sourced): each prints "ok"/"FAIL" and counts into passed/failed.

passed=0
failed=0

## assert_eq NAME EXPECTED ACTUAL
assert_eq() {
  if [[ "$2" == "$3" ]]; then
    passed=$((passed + 1))
    echo "  ok   $1"
  else
    failed=$((failed + 1))
    echo "  FAIL $1: expected '$2', got '$3'"
  fi
}

## assert_contains NAME NEEDLE HAYSTACK [absent]: NEEDLE is in HAYSTACK (with "absent": is not).
assert_contains() {
  local found=present
  [[ "$3" == *"$2"* ]] || found=absent
  if [[ "${found}" == "${4:-present}" ]]; then
    passed=$((passed + 1))
    echo "  ok   $1"
  else
    failed=$((failed + 1))
    echo "  FAIL $1: '$2' ${found} in:"
    printf '%s\n' "$3" | sed 's/^/       | /'
  fi
}
