/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.TaskType;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What goes wrong in a shuffle, on a MiniMRYarnCluster: a corrupted map output (detected by the
 * reducer, reported, the map re-run, output unchanged) and a shuffle service that is not there
 * (the reducers fall back to stock and say so; strict mode fails them with the reason).
 */
class ShuffleFaultIT {
  private static HpcMiniCluster cluster;
  private static Path input;
  private static List<String> stockOutput;

  @BeforeAll
  static void start() throws Exception {
    Configuration extra = new Configuration(false);
    extra.setInt(MRJobConfig.MAX_FETCH_FAILURES_NOTIFICATIONS, 1);
    extra.setLong(MRJobConfig.MAX_SHUFFLE_FETCH_RETRY_DELAY, 1000);
    cluster = new HpcMiniCluster("shuffle-fault", 1, extra);
    input = cluster.text("fault-words", 30_000, 3000, 7);
    Path out = new Path("/fault/stock");
    waitFor(wordCount(cluster.stock(), out));
    stockOutput = cluster.digest(out);
    assertFalse(stockOutput.isEmpty());
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A few maps, one reducer. */
  private static Job wordCount(Configuration conf, Path out) throws IOException {
    return HpcMiniCluster.wordCount(conf, input, out, 1, 120 * 1024);
  }

  private static void waitFor(Job job) throws Exception {
    HpcMiniCluster.waitFor(job);
  }

  @Test
  void corruptMapOutputIsDetectedAndTheMapRerun() throws Exception {
    Configuration conf = cluster.hpc();
    conf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 1.0f);
    Path out = new Path("/fault/corrupt");
    Job job = wordCount(conf, out);
    job.submit();
    String attempt = job.getJobID().toString().replace("job_", "attempt_") + "_m_000000_0";
    AtomicReference<String> corrupted = new AtomicReference<>();
    Thread saboteur = new Thread(() -> {
      try {
        corrupted.set(corruptWhenWritten(attempt));
      } catch (Exception e) {
        corrupted.set("failed: " + e);
      }
    });
    saboteur.start();
    waitFor(job);
    saboteur.join(1000);
    assertTrue(corrupted.get() != null && corrupted.get().startsWith("/"),
        "the map output was corrupted before the fetch: " + corrupted.get());

    assertEquals(stockOutput, cluster.digest(out), "output after the map was re-run");
    Counters c = job.getCounters();
    assertTrue(c.findCounter(TaskCounter.FAILED_SHUFFLE).getValue() >= 1,
        "the reducer counted the failed fetch");
    assertEquals(0, c.findCounter(HpcShuffleCounter.FALLBACKS).getValue());
    List<String> map0 = new ArrayList<>();
    for (TaskCompletionEvent e : allEvents(job)) {
      if (e.getTaskAttemptId().getTaskType() == TaskType.MAP
          && e.getTaskAttemptId().getTaskID().getId() == 0) {
        map0.add(e.getTaskAttemptId().getId() + ":" + e.getStatus());
      }
    }
    assertTrue(map0.contains("0:OBSOLETE") || map0.contains("0:FAILED"), map0.toString());
    assertTrue(map0.stream().anyMatch(s -> !s.startsWith("0:") && s.endsWith(":SUCCEEDED")),
        "map 0 was run again: " + map0);
  }

  private static List<TaskCompletionEvent> allEvents(Job job) throws Exception {
    List<TaskCompletionEvent> all = new ArrayList<>();
    for (int from = 0; ; ) {
      TaskCompletionEvent[] batch = job.getTaskCompletionEvents(from, 100);
      if (batch.length == 0) {
        return all;
      }
      all.addAll(List.of(batch));
      from += batch.length;
    }
  }

  /**
   * Waits for {@code attempt}'s index file in the NodeManager's local dirs (written after the
   * data, before the map reports done, so before any reducer fetches) to be readable in full
   * (the first look may catch it half written), then flips bytes in the
   * middle of its partition 0. Returns the data file's path.
   */
  private static String corruptWhenWritten(String attempt) throws Exception {
    // MiniYARNCluster keeps its NodeManagers' local dirs under test.build.data/<cluster name>
    File root = new File(System.getProperty("test.build.data", "target/test-data"),
        "shuffle-fault");
    long deadline = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < deadline) {
      Optional<java.nio.file.Path> index;
      try (Stream<java.nio.file.Path> s = Files.walk(root.toPath())) {
        index = s.filter(p -> p.endsWith(attempt + "/file.out.index")).findFirst();
      } catch (IOException | java.io.UncheckedIOException e) {
        index = Optional.empty(); // a directory vanished while walking
      }
      if (index.isPresent()) {
        File data = index.get().resolveSibling("file.out").toFile();
        IndexRecord rec;
        try {
          rec = new SpillRecord(new Path(index.get().toString()),
              new JobConf(new Configuration(false))).getIndex(0);
        } catch (IOException e) {
          // the map is still writing the index (EOF) or its checksum: look again shortly
          Thread.sleep(20);
          continue;
        }
        try (RandomAccessFile f = new RandomAccessFile(data, "rw")) {
          for (long at = rec.startOffset + rec.partLength / 3; at < rec.startOffset
              + rec.partLength - 8; at += Math.max(1, rec.partLength / 7)) {
            f.seek(at);
            int b = f.read();
            f.seek(at);
            f.write(b ^ 0x5a);
          }
        }
        return data.getPath().startsWith("/") ? data.getPath() : data.getAbsolutePath();
      }
      Thread.sleep(20);
    }
    return null;
  }

  @Test
  void missingServiceFallsBackToStock() throws Exception {
    Configuration conf = cluster.hpc();
    conf.setInt(ShuffleConfigKeys.PORT_KEY, HpcShuffleHandlerTest.freePortRange(1));
    conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, 1);
    Path out = new Path("/fault/no-service");
    Job job = wordCount(conf, out);
    waitFor(job);
    assertEquals(stockOutput, cluster.digest(out));
    assertEquals(1, job.getCounters().findCounter(HpcShuffleCounter.FALLBACKS).getValue());
    assertEquals(0, job.getCounters().findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue());
  }

  @Test
  void strictModeFailsWithTheReasonInsteadOfFallingBack() throws Exception {
    Configuration conf = cluster.hpc();
    conf.setInt(ShuffleConfigKeys.PORT_KEY, HpcShuffleHandlerTest.freePortRange(1));
    conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, 1);
    conf.setBoolean(ShuffleConfigKeys.STRICT_KEY, true);
    conf.setInt(MRJobConfig.REDUCE_MAX_ATTEMPTS, 1);
    Job job = wordCount(conf, new Path("/fault/strict"));
    assertFalse(job.waitForCompletion(false), "strict job must fail without the service");
    List<String> diagnostics = new ArrayList<>();
    for (TaskCompletionEvent e : allEvents(job)) {
      if (e.getTaskAttemptId().getTaskType() == TaskType.REDUCE) {
        diagnostics.addAll(List.of(job.getTaskDiagnostics(e.getTaskAttemptId())));
      }
    }
    assertTrue(diagnostics.stream().anyMatch(d -> d.contains(ShuffleConfigKeys.STRICT_KEY
        + "=true") && d.contains("no hpc shuffle service answers")), diagnostics.toString());
  }
}
