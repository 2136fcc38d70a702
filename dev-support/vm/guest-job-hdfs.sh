#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# The whole job's HDFS part as CI runs it (guest-job.sh, test-rdma --job hdfs): a file of
# random bytes written with bin/hadoop fs -put (a client JVM, its DataTransfer strict over the
# device), read back with fs -cat (a second client: the block checksums are verified on read) and
# through WebHDFS (the DataNode's own client), each compared byte for byte (md5) with the
# source. Sourced by guest-job.sh after HDFS started; sets bytes and client_log.
# shellcheck disable=SC2154  # work, H, rows, device, local helpers: set by guest-job.sh

bytes=$((rows * 100))
step "hadoop fs -put ${bytes} bytes, read back with fs -cat and WebHDFS"
head -c "${bytes}" /dev/urandom >"${work}/source.bin"
src_md5=$(md5sum <"${work}/source.bin" | cut -d ' ' -f 1)
hw_mark
client_log="${work}/put.log"
# at the root: fs -put makes no parent directory
if timeout "${job_timeout}" "${H}/bin/hadoop" fs -put "${work}/source.bin" /hpc-vm.bin \
  >"${client_log}" 2>&1; then
  pass "hadoop fs -put ${bytes} bytes to /hpc-vm.bin"
else
  give_up "hadoop fs -put (exit $?)" "$(tail -n 30 "${client_log}")"
fi
cat_md5=$(timeout "${job_timeout}" "${H}/bin/hadoop" fs -cat /hpc-vm.bin 2>"${work}/cat.log" |
  md5sum | cut -d ' ' -f 1)
[[ "${cat_md5}" == "${src_md5}" ]] &&
  pass "hadoop fs -cat reads back the source's bytes (md5 ${cat_md5})" ||
  fail "hadoop fs -cat reads back the source's bytes" \
    "md5 source ${src_md5}, fs -cat ${cat_md5}; $(tail -n 10 "${work}/cat.log")"
# put (client -> DataNode) and fs -cat (DataNode -> client): both over rxe0
packets_at_least hdfs $((2 * bytes))
# WebHDFS's first request starts its web application: tens of seconds under TCG
web_md5=$(webhdfs_cat /hpc-vm.bin | md5sum | cut -d ' ' -f 1)
[[ "${web_md5}" == "${src_md5}" ]] &&
  pass "WebHDFS (the DataNode's own client) reads back the source's bytes (md5 ${web_md5})" ||
  fail "WebHDFS reads back the source's bytes" "md5 source ${src_md5}, WebHDFS ${web_md5}"
