/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.fs.PrivateDirs;
import org.hadoophpc.mapreduce.lustre.SharedMapOutputs;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map output on the shared mount that is not the job user's is a failed fetch of that map
 * (stock's copyFailed: the AM re-runs it), never read: no bytes of it reach the merge (the merge
 * manager here is null, so a read would fail the test otherwise).
 */
class SharedFsFetcherTest {
  private static final org.apache.hadoop.mapred.TaskAttemptID REDUCE =
      new org.apache.hadoop.mapred.TaskAttemptID("1700", 5, TaskType.REDUCE, 0, 0);
  private static final TaskAttemptID MAP =
      new org.apache.hadoop.mapred.TaskAttemptID("1700", 5, TaskType.MAP, 0, 0);
  private static final String JOB = REDUCE.getJobID().toString();

  @TempDir
  Path tmp;
  private JobConf job;
  private SharedMapOutputs shared;

  @BeforeEach
  void publishOneMap() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    Configuration conf = new Configuration(false);
    conf.set(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY,
        Files.createDirectory(tmp.resolve("shared")).toString());
    job = new JobConf(conf);
    shared = SharedMapOutputs.from(job);
    Path local = Files.createDirectory(tmp.resolve("local"));
    Path out = Files.write(local.resolve("file.out"), new byte[10]);
    Path index = local.resolve("file.out.index");
    SpillRecord spill = new SpillRecord(1);
    spill.putIndex(new IndexRecord(0, 10, 10), 0);
    spill.writeToFile(new org.apache.hadoop.fs.Path(index.toUri()), job);
    shared.publish(JOB, MAP.toString(), out, index);
  }

  /** One fetch of the map by a shared-mount fetcher: the maps it reported failed. */
  private List<TaskAttemptID> fetch() throws Exception {
    RecordingScheduler scheduler = new RecordingScheduler(job, REDUCE, List.of(MAP));
    SharedFsFetcher<Object, Object> fetcher = new SharedFsFetcher<>(new HpcShuffleConsumer<>(),
        0, job, REDUCE, scheduler, null, ShuffleClientMetrics.create(REDUCE, job),
        Reporter.NULL, shared);
    fetcher.copyFromHost(new MapHost("localhost", "lustre"));
    return scheduler.failed;
  }

  @Test
  void aMapOutputOfAnotherUserIsAFailedFetch() throws Exception {
    assumeTrue(PrivateDirs.processUid() == 0, "needs root to give the output to another user");
    Files.setAttribute(shared.output(JOB, MAP.toString()), "unix:uid", 65534,
        LinkOption.NOFOLLOW_LINKS);
    assertEquals(List.of(MAP), fetch());
  }

  @Test
  void anIndexSwappedForALinkIsAFailedFetch() throws Exception {
    Path index = shared.index(JOB, MAP.toString());
    Path elsewhere = Files.copy(index, tmp.resolve("elsewhere.index"));
    Files.delete(index);
    Files.createSymbolicLink(index, elsewhere);
    assertEquals(List.of(MAP), fetch());
  }
}
