/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.MapOutput;
import org.apache.hadoop.mapreduce.task.reduce.MergeManager;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleSchedulerImpl;
import org.apache.hadoop.util.Time;
import org.hadoophpc.mapreduce.lustre.SharedMapOutputs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads map outputs straight from the shared Lustre mount (MapReduce over Lustre without local
 * disks): for each map the scheduler hands out, the partition's place in the map's one output
 * file comes from its index ({@link SpillRecord}, checksummed), and the bytes go from the file
 * into the output the merge manager reserves (IFile checksums verified there, as for a network
 * fetch). Only the attempts the AM reported as succeeded are read. A missing, short or corrupt
 * output, or one that is not the job user's ({@link SharedMapOutputs#checkPublished}), is a read
 * error for that map, reported as stock reports a failed fetch, so the AM re-runs the map.
 */
final class SharedFsFetcher<K, V> extends MapOutputFetcher<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(SharedFsFetcher.class);
  private static final int READ_BUFFER = 128 * 1024;

  private final JobConf job;
  private final String jobId;
  private final int reduce;
  private final SharedMapOutputs shared;

  SharedFsFetcher(HpcShuffleConsumer<K, V> consumer, int id, JobConf job, TaskAttemptID reduceId,
      ShuffleSchedulerImpl<K, V> scheduler, MergeManager<K, V> merger,
      ShuffleClientMetrics metrics, Reporter reporter, SharedMapOutputs shared) {
    super("lustre-fetcher", consumer, id, scheduler, merger, metrics, reporter);
    this.job = job;
    this.jobId = reduceId.getJobID().toString();
    this.reduce = reduceId.getTaskID().getId();
    this.shared = shared;
  }

  @Override
  void copyFromHost(MapHost host) throws IOException {
    List<TaskAttemptID> maps = scheduler.getMapsForHost(host);
    int done = 0;
    try {
      for (; done < maps.size() && !stopped; done++) {
        if (!copy(host, maps.get(done))) {
          done++;
          return; // the merger asked to wait (this map went back) or the map failed
        }
      }
    } finally {
      for (int i = done; i < maps.size(); i++) {
        scheduler.putBackKnownMapOutput(host, maps.get(i));
      }
    }
  }

  /** Copies one map's partition; false when the caller should stop with this host for now. */
  private boolean copy(MapHost host, TaskAttemptID map) throws IOException {
    String attempt = map.toString();
    Path index = shared.index(jobId, attempt);
    Path output = shared.output(jobId, attempt);
    try {
      shared.checkPublished(jobId, attempt);
    } catch (IOException e) {
      failed(host, map, "cannot use its published output: " + e.getMessage(), e);
      return false;
    }
    IndexRecord part;
    try {
      part = new SpillRecord(new org.apache.hadoop.fs.Path(index.toUri()), job).getIndex(reduce);
    } catch (IOException | RuntimeException e) {
      failed(host, map, "cannot read the index " + index, e);
      return false;
    }
    MapOutput<K, V> out;
    try {
      out = merger.reserve(map, part.rawLength, id);
    } catch (IOException e) {
      scheduler.putBackKnownMapOutput(host, map);
      scheduler.reportLocalError(e);
      return false;
    }
    if (out == null) {
      LOG.info("lustre-fetcher#{}: merge manager asks to wait; {} goes back", id, map);
      scheduler.putBackKnownMapOutput(host, map);
      return false;
    }
    long start = Time.monotonicNow();
    try (FileChannel ch = FileChannel.open(output, StandardOpenOption.READ,
        LinkOption.NOFOLLOW_LINKS)) {
      if (ch.size() < part.startOffset + part.partLength) {
        throw new IOException(output + " has " + ch.size() + " bytes, its index promises "
            + (part.startOffset + part.partLength));
      }
      InputStream in = new BufferedInputStream(Channels.newInputStream(
          ch.position(part.startOffset)), READ_BUFFER);
      out.shuffle(host, in, part.partLength, part.rawLength, metrics, reporter);
    } catch (InterruptedIOException e) {
      out.abort();
      throw e;
    } catch (InternalError | Exception e) {
      out.abort();
      failed(host, map, "cannot read its partition from " + output, e);
      return false;
    }
    scheduler.copySucceeded(map, host, part.partLength, start, Time.monotonicNow(), out);
    metrics.successFetch();
    consumer.countSharedBytes(part.partLength);
    return true;
  }

  private void failed(MapHost host, TaskAttemptID map, String what, Throwable e) {
    LOG.warn("lustre-fetcher#{}: map output of {} for reduce {}: {}", id, map, reduce, what, e);
    metrics.failedFetch();
    scheduler.copyFailed(map, host, true, false);
  }
}
