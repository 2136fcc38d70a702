#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Runs inside the Soft-RoCE VM (started by guest-init.sh): device sanity, the native ctest suite
# and the Java verbs tests (classes matching .*Verbs.*Test: the transport, and the shuffle
# service fetching real map-output files) against rxe0. Everything it needs was
# built on the host and is reached through the 9p shares at the host's own paths. Writes
# OUT/results.env (key=value, read by dev-support/bin/test-rdma) and the JUnit XML to OUT/junit.
#
# Usage: guest-run-tests.sh REPO OUT
set -u
repo=$1
out=$2
device=rxe0
native="${repo}/rdma-native/target/native"
launcher="${out}/lib/junit-platform-console-standalone.jar"
# The module's classes and the library as test-rdma snapshotted them right after the host build,
# so a rebuild on the host while the VM runs cannot pull classes from under the JVM.
snapshot="${out}/snapshot"
# hadoop-hpc-common, the transport, the shuffle module (HpcShuffleHandlerVerbsTest), hdfs
# (TransferVerbsTest) and
# their dependencies (the snapshots first: the jars in the repository may be older)
classpath="${snapshot}/classes:${snapshot}/test-classes:$(cat "${out}/test-classpath.txt")"
classpath="${snapshot}/transport-classes:${snapshot}/transport-test-classes:${classpath}"
classpath+=":$(cat "${out}/transport-test-classpath.txt")"
classpath+=":${snapshot}/shuffle-classes:${snapshot}/shuffle-test-classes"
classpath+=":$(cat "${out}/shuffle-test-classpath.txt")"
classpath+=":${snapshot}/hdfs-classes:${snapshot}/hdfs-test-classes"
classpath+=":$(cat "${out}/hdfs-test-classpath.txt")"
java_opts=(
  # C1 only: C2's compile threads cost more than they save in a short run under TCG.
  -XX:TieredStopAtLevel=1
  -Djava.io.tmpdir=/tmp/java-tmp
  -Dhadoop.hpc.native.lib="${snapshot}/libhpcnative.so"
  -Dhadoop.hpc.native.test.lib.dir="${native}/build/test-lib"
)
mkdir -p /tmp/java-tmp
results="${out}/results.env"
: >"${results}"

now() {
  cut -d ' ' -f 1 /proc/uptime
}

say() {
  printf 'hpc-vm [%6.1f s] %s\n' "$(now)" "$*"
}

result() {
  printf '%s=%s\n' "$1" "$2" >>"${results}"
}

## elapsed SINCE: seconds since the uptime SINCE, one decimal.
elapsed() {
  awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

## junit_count WHAT LOG: a number from the launcher's summary box, e.g. "tests failed".
junit_count() {
  sed -n "s/^\\[ *\\([0-9][0-9]*\\) $1 *\\]\$/\\1/p" "$2" | tail -n 1
}

# --- a. the device ----------------------------------------------------------------------------
t=$(now)
say "a. device sanity"
ibv_devices
ibv_devinfo -d "${device}" | tee "${out}/ibv_devinfo.txt"
if grep -q 'state:[[:space:]]*PORT_ACTIVE' "${out}/ibv_devinfo.txt"; then
  result sanity ok
else
  say "FAIL: ${device} has no ACTIVE port"
  result sanity fail
fi
say "checknative (org.hadoophpc.nativeio.CheckNative) in the guest:"
java "${java_opts[@]}" -cp "${classpath}" org.hadoophpc.nativeio.CheckNative 2>&1 |
  tee "${out}/checknative.txt"
result sanity_seconds "$(elapsed "${t}")"

# --- b. native tests --------------------------------------------------------------------------
t=$(now)
say "b. native tests: ctest in ${native}/build (HPCN_REQUIRE_VERBS=1)"
(cd "${native}/build" && HPCN_REQUIRE_VERBS=1 ctest --output-on-failure --timeout 600) \
  >"${out}/ctest.log" 2>&1
native_rc=$?
cat "${out}/ctest.log"
# "100% tests passed, 0 tests failed out of 12"
summary=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "${out}/ctest.log" | tail -n 1)
native_failed=$(sed -n 's/.* \([0-9][0-9]*\) tests\{0,1\} failed out of.*/\1/p' <<<"${summary}")
native_total=$(sed -n 's/.* failed out of \([0-9][0-9]*\).*/\1/p' <<<"${summary}")
native_skipped=$(grep -c '(Skipped)' "${out}/ctest.log")
result native_rc "${native_rc}"
result native_total "${native_total:-0}"
result native_failed "${native_failed:-0}"
result native_skipped "${native_skipped:-0}"
result native_seconds "$(elapsed "${t}")"

# --- c. Java verbs tests ----------------------------------------------------------------------
t=$(now)
say "c. Java verbs tests (.*Verbs.*Test) on the guest's JRE: $(java -version 2>&1 | head -n 1)"
java "${java_opts[@]}" -Dhadoop.hpc.test.require.verbs=true \
  -Dhadoop.hpc.test.verbs.device="${device}" \
  -jar "${launcher}" execute --disable-banner --disable-ansi-colors --details=tree \
  --class-path "${classpath}" --scan-class-path="${snapshot}/test-classes:${snapshot}/transport-test-classes:${snapshot}/shuffle-test-classes:${snapshot}/hdfs-test-classes" \
  --include-classname '^.*Verbs.*Test$' --reports-dir "${out}/junit" \
  >"${out}/junit.log" 2>&1
java_rc=$?
cat "${out}/junit.log"
result java_rc "${java_rc}"
result java_found "$(junit_count 'tests found' "${out}/junit.log")"
result java_failed "$(junit_count 'tests failed' "${out}/junit.log")"
result java_skipped "$(junit_count 'tests skipped' "${out}/junit.log")"
result java_aborted "$(junit_count 'tests aborted' "${out}/junit.log")"
result java_containers_failed "$(junit_count 'containers failed' "${out}/junit.log")"
result java_seconds "$(elapsed "${t}")"
say "tests finished"
