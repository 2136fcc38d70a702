#!/usr/bin/env bash
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# Runs inside the Soft-RoCE VM (started by guest-init.sh): device sanity, the native ctest suite,
# the Java verbs tests (classes matching .*Verbs.*Test: the transport, the shuffle service
# fetching real map-output files, HDFS files) against rxe0, then one whole job from the
# tarball's pseudo-distributed cluster over rxe0 (guest-job.sh). Everything it needs was
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
# hadoop-hpc-common, the transport, the shuffle module (HpcShuffleHandlerVerbsTest,
# TcpFallbackVerbsTest), hdfs
# (TransferVerbsTest) and
# their dependencies (the snapshots first: the jars in the repository may be older)
classpath="${snapshot}/classes.jar:${snapshot}/test-classes.jar:$(cat "${out}/test-classpath.txt")"
classpath="${snapshot}/transport-classes.jar:${snapshot}/transport-test-classes.jar:${classpath}"
classpath+=":$(cat "${out}/transport-test-classpath.txt")"
classpath+=":${snapshot}/shuffle-classes.jar:${snapshot}/shuffle-test-classes.jar"
classpath+=":$(cat "${out}/shuffle-test-classpath.txt")"
classpath+=":${snapshot}/hdfs-classes.jar:${snapshot}/hdfs-test-classes.jar"
classpath+=":$(cat "${out}/hdfs-test-classpath.txt")"
# the test classes the launcher scans for .*Verbs.*Test
tests="${snapshot}/test-classes.jar:${snapshot}/transport-test-classes.jar"
tests+=":${snapshot}/shuffle-test-classes.jar:${snapshot}/hdfs-test-classes.jar"
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
# shellcheck source=guest-lib.sh
. "$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)/guest-lib.sh"

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
# checknative runs in step d, as bin/hadoop checknative from the tarball (a user's check; here
# with the test classpath over 9p it took ~40 s under TCG).
result sanity_seconds "$(elapsed "${t}")"

# --- b. native tests --------------------------------------------------------------------------
t=$(now)
say "b. native tests: ctest in ${native}/build (HPCN_REQUIRE_VERBS=1)"
# Under valgrind here only what touches the device: the other valgrind runs (version, format,
# lustre, memory: ~30 s under TCG) see nothing the host's ctest in the Maven stage did not.
(cd "${native}/build" && HPCN_REQUIRE_VERBS=1 ctest --output-on-failure --timeout 600 \
  -E '^valgrind_test_(version|format|lustre|memory)$') >"${out}/ctest.log" 2>&1
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
# The classpath goes to the JVM (in an argument file), not to the launcher's --class-path: the
# launcher closes the class loader it makes for that before the JVM's shutdown hooks run, and
# Hadoop's hook then failed with NoClassDefFoundError (ShutdownHookManager$2) after the run.
printf -- '-cp %s\n' "${launcher}:${classpath}" >"${out}/junit-classpath.args"
java "${java_opts[@]}" -Dhadoop.hpc.test.require.verbs=true \
  -Dhadoop.hpc.test.verbs.device="${device}" @"${out}/junit-classpath.args" \
  org.junit.platform.console.ConsoleLauncher execute --disable-banner --disable-ansi-colors \
  --details=tree --scan-class-path="${tests}" \
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

# --- d. the whole job over rxe0 ---------------------------------------------------------------
# The tarball as test-rdma snapshotted it; its cluster runs on the guest's own disk.
tarball=$(echo "${snapshot}"/hadoop-hpc-*.tar.gz)
if [[ -f "${tarball}" ]]; then
  bash "${repo}/dev-support/vm/guest-job.sh" "${tarball}" /tmp/hpc-job "${results}" 2>&1 |
    tee "${out}/job.log"
  result job_rc "${PIPESTATUS[0]}"
  rm -rf "${out}/job-logs"
  cp -r /tmp/hpc-job/hadoop-hpc-*/logs "${out}/job-logs" 2>/dev/null
  cp /tmp/hpc-job/*.log "${out}/job-logs/" 2>/dev/null
else
  say "FAIL: no tarball in ${snapshot} (the whole job cannot run)"
  result job_rc 1
fi
say "tests finished"
