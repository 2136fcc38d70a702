#!/usr/bin/env bash
# pass() always succeeds, so "A && pass || fail" is a plain if-then-else here.
# shellcheck disable=SC2015
# Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
#
# The whole job's YARN part (guest-job.sh, test-rdma --job terasort): sbin/start-yarn.sh with
# TeraGen beside it, TeraSort on YARN (2 maps, 2 reduces) with the hpc shuffle strict over the
# device, the output read back through WebHDFS and compared with the input. Sourced by
# guest-job.sh after HDFS started; sets bytes, client_log and nm_log for its last checks.
# shellcheck disable=SC2154,SC2034  # work, H, ex, rows, helpers: set by guest-job.sh, which
# reads bytes, client_log and nm_log

# TeraGen runs in its client's JVM (the local job runner): every JVM costs tens of seconds
# under TCG, it has no shuffle to prove, and its HDFS streams go over rxe0 all the same (the
# client's socket factory, strict). TeraSort runs on YARN. TeraGen needs
# only HDFS, so it runs while start-yarn.sh starts and waits for YARN (202 s of the lane's
# 1436 s in the CI run of bd0ea90, with 182 s of TeraGen in the ApplicationMaster after it).
local_job=-Dmapreduce.framework.name=local
client_log="${work}/teragen.log"
step "start YARN (sbin/start-yarn.sh), TeraGen ${rows} rows ($((rows * 100)) bytes) beside it"
# Not beside sbin/start-dfs.sh: the guest's two vCPUs are busy with either start, and HDFS
# came up 150 s later with YARN starting beside it, which delayed TeraGen (measured: the
# two starts and TeraGen took 348 s that way, 309 s one after the other).
# start-yarn.sh gives up after HADOOP_HPC_START_TIMEOUT (600 s, above); timeout bounds the wait
# for it below even if it did not.
timeout 900 "${H}/sbin/start-yarn.sh" >"${work}/start-yarn.log" 2>&1 &
yarn_pid=$!
bytes=$((rows * 100))
hw_mark
# (one map: the local job runner sets mapreduce.job.maps to 1, so TeraGen writes one file)
if ! hadoop_job "teragen ${rows} rows" "${work}/teragen.log" teragen "${local_job}" \
  "${rows}" /vm/in; then
  wait "${yarn_pid}"
  give_up "teragen did not run: nothing to sort"
fi
# What HDFS holds (through WebHDFS: no client JVM).
# WebHDFS's first request starts its web application: tens of seconds under TCG with YARN
# starting beside it (10 s was too short once)
written=$(jmx_number "$(http_get 9870 '/webhdfs/v1/vm/in?op=GETCONTENTSUMMARY' 60)" length)
[[ "${written:-0}" -eq "${bytes}" ]] && pass "/vm/in holds ${written} bytes" ||
  fail "/vm/in holds ${bytes} bytes (content summary: '${written}')"
# TeraGen has no shuffle: what rxe0 carried here is HDFS (replication 1: client -> DataNode;
# the YARN daemons starting beside it talk TCP on eth0, which rxe0's counters do not count).
packets_at_least teragen "${bytes}"
wait "${yarn_pid}" ||
  give_up "sbin/start-yarn.sh" "$(tail -n 30 "${work}/start-yarn.log")"
pass "start-yarn.sh: YARN ready"
nm_log=$(echo "${H}"/logs/hadoop-*-nodemanager-*.log)

step "terasort: 2 maps, 2 reduces, hpc shuffle strict"
hw_mark
# Two maps from TeraGen's one file: splits of half the input at most.
hadoop_job "terasort, hpc shuffle strict over ${device}" "${work}/terasort.log" terasort \
  -Dmapreduce.input.fileinputformat.split.maxsize=$(((bytes + 1) / 2)) \
  -Dmapreduce.job.reduces=2 /vm/in /vm/out
shown='HPC Shuffle|Bytes fetched over|Reducers that fell back|Reduce shuffle bytes'
shown+='|Launched (map|reduce) tasks|HDFS(-TRANSPORT)?: Number of bytes (read|written)'
grep -E "${shown}" \
  "${work}/terasort.log" | sed 's/^[[:space:]]*/      /'
verbs=$(counter "${work}/terasort.log" 'Bytes fetched over verbs (RDMA)')
tcp=$(counter "${work}/terasort.log" 'Bytes fetched over tcp')
fallbacks=$(counter "${work}/terasort.log" 'Reducers that fell back to the stock shuffle')
shuffled=$(counter "${work}/terasort.log" 'Reduce shuffle bytes')
maps=$(counter "${work}/terasort.log" 'Launched map tasks')
reduces=$(counter "${work}/terasort.log" 'Launched reduce tasks')
result job_shuffle_bytes_verbs "${verbs:-0}"
seen="verbs ${verbs:-?} of Reduce shuffle bytes ${shuffled:-?}, tcp ${tcp:-0}"
seen+=", fallbacks ${fallbacks:-0}"
[[ "${verbs:-0}" -gt 0 && "${verbs}" -eq "${shuffled:--1}" && "${tcp:-0}" -eq 0 &&
  "${fallbacks:-0}" -eq 0 ]] &&
  pass "every shuffled byte over verbs (Bytes fetched over verbs (RDMA)): ${seen}" ||
  fail "every shuffled byte over verbs (Bytes fetched over verbs (RDMA)): ${seen}"
[[ "${maps:-0}" -ge 2 && "${reduces:-0}" -eq 2 ]] && pass "${maps} maps, ${reduces} reduces" ||
  fail "2 maps and 2 reduces (launched: maps '${maps}', reduces '${reduces}')"
# The tasks' HDFS streams over the transport, as the job counts them (File System Counters).
hdfs_in=$(counter "${work}/terasort.log" 'HDFS-TRANSPORT: Number of bytes read')
hdfs_out=$(counter "${work}/terasort.log" 'HDFS-TRANSPORT: Number of bytes written')
result job_hdfs_transport_bytes_read "${hdfs_in:-0}"
result job_hdfs_transport_bytes_written "${hdfs_out:-0}"
[[ "${hdfs_in:-0}" -ge "${bytes}" && "${hdfs_out:-0}" -ge "${bytes}" ]] &&
  pass "job counters HDFS-TRANSPORT: ${hdfs_in} bytes read, ${hdfs_out} written (>= ${bytes} each)" ||
  fail "job counters HDFS-TRANSPORT bytes read '${hdfs_in}' and written '${hdfs_out}' >= ${bytes}"
# HDFS read of the input, the shuffle, HDFS write of the output: all through rxe0.
packets_at_least terasort $((2 * bytes + ${shuffled:-0}))

step "teravalidate (local job runner) beside a read-back of input and output through WebHDFS"
# TeraValidate as a user runs it, in its client's JVM (the local job runner, as TeraGen: on
# YARN it took 119-162 s under TCG): its HDFS reads go over rxe0 (strict), and its report must
# hold the output's checksum and no error. Beside it, the stricter check without a JVM: the
# output's keys in order across the part files, and the output's rows exactly the input's (a
# lost, duplicated or changed row changes the sorted rows' md5). Both files are read through
# WebHDFS: the NameNode names the DataNode that serves each, whose own HDFS client reads the
# blocks.
timeout "${job_timeout}" "${H}/bin/hadoop" jar "${ex}" teravalidate "${local_job}" /vm/out \
  /vm/report >"${work}/teravalidate.log" 2>&1 &
validate_pid=$!
rows_hex() {
  od -An -v -w100 -tx1 | tr -d ' '
}
## part_files DIR: the part files of a job's output directory, in name order.
part_files() {
  http_get 9870 "/webhdfs/v1$1?op=LISTSTATUS" 60 |
    grep -o '"pathSuffix" *: *"part-[mr]-[0-9]*"' | sed 's/.*"\(part-[mr]-[0-9]*\)"/\1/' | sort
}
in_parts=$(part_files /vm/in)
parts=$(part_files /vm/out)
for part in ${in_parts}; do
  webhdfs_cat "/vm/in/${part}"
done | rows_hex | LC_ALL=C sort >"${work}/in.sorted.hex"
for part in ${parts}; do
  webhdfs_cat "/vm/out/${part}"
done | rows_hex >"${work}/out.hex"
in_rows=$(grep -c . "${work}/in.sorted.hex")
out_rows=$(grep -c . "${work}/out.hex")
n_parts=$(grep -c . <<<"${parts}")
echo "    input ${in_rows} rows in ${in_parts//$'\n'/ }, output ${out_rows} rows in ${parts//$'\n'/ }"
[[ "${in_rows}" -eq "${rows}" && "${out_rows}" -eq "${rows}" && "${n_parts}" -eq 2 ]] &&
  pass "read back ${rows} rows of input and ${rows} rows of output in 2 part files" ||
  fail "read back ${rows} rows of input and of output in 2 part files" \
    "input ${in_rows} rows, output ${out_rows} rows in part files: ${parts//$'\n'/ }"
# 10-byte keys as 20 hex digits: LC_ALL=C orders them as TeraSort does (unsigned bytes).
if unsorted=$(cut -c 1-20 "${work}/out.hex" | LC_ALL=C sort -c 2>&1); then
  pass "output sorted by key across its part files"
else
  fail "output sorted by key across its part files" "${unsorted}"
fi
in_md5=$(md5sum <"${work}/in.sorted.hex" | cut -d ' ' -f 1)
out_md5=$(LC_ALL=C sort "${work}/out.hex" | md5sum | cut -d ' ' -f 1)
[[ "${in_rows}" -gt 0 && "${in_md5}" == "${out_md5}" ]] &&
  pass "the output's rows are the input's (md5 of the sorted rows ${out_md5})" ||
  fail "the output's rows are the input's" "md5 of the sorted rows: input ${in_md5}, output ${out_md5}"
if wait "${validate_pid}"; then
  report=$(webhdfs_cat /vm/report/part-r-00000)
  echo "    teravalidate report: ${report//$'\n'/ }"
  grep -q '^checksum' <<<"${report}" && ! grep -q '^error' <<<"${report}" &&
    pass "teravalidate: the output is sorted (its report holds a checksum and no error)" ||
    fail "teravalidate: the output is sorted (a checksum, no error)" "report: ${report}"
else
  fail "teravalidate (exit $?)" "$(tail -n 30 "${work}/teravalidate.log")"
fi
