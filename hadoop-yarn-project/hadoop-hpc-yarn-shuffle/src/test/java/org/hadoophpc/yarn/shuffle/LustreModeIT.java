/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.RandomWriter;
import org.apache.hadoop.examples.Sort;
import org.apache.hadoop.examples.terasort.TeraGen;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.util.ToolRunner;
import org.hadoophpc.mapreduce.lustre.LustreMapOutputCollector;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * MapReduce over Lustre, with a local directory standing in for the shared mount: the same job
 * as stock on HDFS and in each Lustre mode (input and output on the mount; intermediate data on
 * local disks and shuffled over the transport, or published on the mount and read straight from
 * it), outputs compared file by file; a map attempt that dies after publishing never reaches a
 * reducer; nothing a job published is left after it; a bad shared directory fails the job with
 * the key to fix.
 */
class LustreModeIT {
  private static HpcMiniCluster cluster;
  private static File mount;
  private static File shuffleDir;

  @BeforeAll
  static void start() throws Exception {
    mount = new File(System.getProperty("test.build.data", "target/test-data"), "lustre-mount")
        .getAbsoluteFile();
    FileUtil.fullyDelete(mount);
    shuffleDir = new File(mount, "shuffle");
    assertTrue(shuffleDir.mkdirs() && new File(mount, "data").mkdirs());
    Configuration site = new Configuration(false);
    // the NodeManagers' service deletes what ended jobs published here
    site.set(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY, shuffleDir.getPath());
    cluster = new HpcMiniCluster("lustre-modes", 2, site);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** A path on the stand-in mount, as a job names it. */
  private static Path onMount(String name) {
    return new Path(new File(mount, "data/" + name).toURI());
  }

  private static Configuration noLocalDisks() {
    Configuration c = cluster.hpc();
    c.set(ShuffleConfigKeys.LUSTRE_MODE_KEY, "no-local-disks");
    c.set(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR, LustreMapOutputCollector.class.getName());
    return c;
  }

  private static Configuration localDisks() {
    Configuration c = cluster.hpc();
    c.set(ShuffleConfigKeys.LUSTRE_MODE_KEY, "local-disks");
    return c;
  }

  private static void runTool(Configuration conf, org.apache.hadoop.util.Tool tool,
      String... args) throws Exception {
    assertEquals(0, ToolRunner.run(conf, tool, args), tool.getClass().getSimpleName() + " "
        + String.join(" ", args));
  }

  /** Copies job input from HDFS to the mount, so both runs read the same bytes. */
  private static Path copyToMount(Path hdfs, String name) throws IOException {
    Path dst = onMount(name);
    assertTrue(FileUtil.copy(cluster.fs(), hdfs, dst.getFileSystem(cluster.stock()), dst, false,
        cluster.stock()));
    return dst;
  }

  /** The outputs match, and each mode moved the shuffle's bytes the way it promises. */
  private static void checkModes(String name, List<String> want, Counters stock, Path ldOut,
      Counters ld, Path nldOut, Counters nld) throws Exception {
    assertFalse(want.isEmpty(), name + ": stock wrote nothing");
    assertEquals(want, cluster.digest(ldOut), name + ": local-disks output differs from stock");
    assertEquals(want, cluster.digest(nldOut), name
        + ": no-local-disks output differs from stock");
    long shuffled = stock.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue();
    assertEquals(shuffled, ld.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue());
    assertEquals(shuffled, ld.findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue(),
        name + ": local-disks shuffles over the transport");
    assertEquals(shuffled, nld.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue());
    assertEquals(shuffled, nld.findCounter(HpcShuffleCounter.BYTES_FROM_LUSTRE).getValue(),
        name + ": no-local-disks reads every byte from the mount");
    assertEquals(0, nld.findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue()
        + nld.findCounter(HpcShuffleCounter.BYTES_OVER_VERBS).getValue(),
        name + ": no-local-disks moved shuffle bytes over the network");
    awaitNothingPublished();
  }

  /** Every job's published outputs are deleted once it ends (by the NodeManagers' service). */
  private static void awaitNothingPublished() throws Exception {
    List<String> left = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      left.clear();
      try (Stream<java.nio.file.Path> s = Files.list(shuffleDir.toPath())) {
        s.forEach(p -> left.add(p.getFileName().toString()));
      }
      if (left.isEmpty()) {
        return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("published map outputs left behind in " + shuffleDir + ": " + left);
  }

  @Test
  void teraSortInBothModesMatchesStockOnHdfs() throws Exception {
    runTool(cluster.stock(), new TeraGen(), "-Dmapreduce.job.maps=2", "30000", "/input/tera");
    Path in = copyToMount(new Path("/input/tera"), "tera");
    Path stockOut = new Path("/lustre/terasort/stock");
    runTool(cluster.stock(), new TeraSort(), "-Dmapreduce.job.reduces=3", "/input/tera",
        stockOut.toString());
    Counters stock = cluster.lastJobCounters();
    Path ldOut = onMount("terasort-ld");
    runTool(localDisks(), new TeraSort(), "-Dmapreduce.job.reduces=3", in.toString(),
        ldOut.toString());
    Counters ld = cluster.lastJobCounters();
    Path nldOut = onMount("terasort-nld");
    runTool(noLocalDisks(), new TeraSort(), "-Dmapreduce.job.reduces=3", in.toString(),
        nldOut.toString());
    Counters nld = cluster.lastJobCounters();
    checkModes("terasort", cluster.digest(stockOut), stock, ldOut, ld, nldOut, nld);
  }

  @Test
  void sortInBothModesMatchesStockOnHdfsWithHibdKeys() throws Exception {
    Configuration gen = cluster.stock();
    gen.setLong(RandomWriter.TOTAL_BYTES, 2L << 20);
    gen.setLong(RandomWriter.BYTES_PER_MAP, 1L << 20);
    runTool(gen, new RandomWriter(), "/input/random");
    Path in = copyToMount(new Path("/input/random"), "random");
    Path stockOut = new Path("/lustre/sort/stock");
    runTool(cluster.stock(), new Sort<>(), "-r", "4", "/input/random", stockOut.toString());
    Counters stock = cluster.lastJobCounters();
    // HiBD's spelling of the modes: mapred.rdma.shuffle.lustre = 1 | 2
    Configuration ld = cluster.hpc();
    ld.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE, "1");
    Path ldOut = onMount("sort-ld");
    runTool(ld, new Sort<>(), "-r", "4", in.toString(), ldOut.toString());
    Counters ldCounters = cluster.lastJobCounters();
    Configuration nld = cluster.hpc();
    nld.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE, "2");
    nld.set(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR,
        LustreMapOutputCollector.class.getName());
    Path nldOut = onMount("sort-nld");
    runTool(nld, new Sort<>(), "-r", "4", in.toString(), nldOut.toString());
    checkModes("sort", cluster.digest(stockOut), stock, ldOut, ldCounters, nldOut,
        cluster.lastJobCounters());
  }

  /**
   * Attempt 0 of map 0 publishes output with a poison record, then dies; speculation is on. The
   * reducers must read only the attempts the AM reported as succeeded.
   */
  @Test
  void anAttemptThatDiesAfterPublishingNeverReachesTheReducers() throws Exception {
    Path text = cluster.text("lustre-words", 20_000, 3000, 7);
    Path in = copyToMount(text, "words");
    Path stockOut = new Path("/lustre/wordcount/stock");
    HpcMiniCluster.waitFor(HpcMiniCluster.wordCount(cluster.stock(), text, stockOut, 2,
        192 * 1024));
    Configuration c = noLocalDisks();
    c.set(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR, DiesAfterPublishing.class.getName());
    c.setBoolean(MRJobConfig.MAP_SPECULATIVE, true);
    c.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, true);
    Path out = onMount("wordcount-nld");
    HpcMiniCluster.waitFor(HpcMiniCluster.wordCount(c, in, out, 2, 192 * 1024));
    Counters counters = cluster.lastJobCounters();
    assertTrue(counters.findCounter(JobCounter.NUM_FAILED_MAPS).getValue() >= 1,
        "the poisoned attempt failed");
    assertEquals(cluster.digest(stockOut), cluster.digest(out),
        "a failed attempt's published output reached a reducer");
    awaitNothingPublished();
  }

  @Test
  void aMissingSharedDirectoryFailsTheJobNamingTheKey() throws Exception {
    Path text = cluster.text("lustre-bad", 100, 10, 3);
    Configuration c = noLocalDisks();
    File missing = new File(mount, "not-there");
    c.set(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY, missing.getPath());
    c.setInt(MRJobConfig.MAP_MAX_ATTEMPTS, 1);
    Job job = HpcMiniCluster.wordCount(c, text, new Path("/lustre/bad"), 1, 1 << 20);
    assertFalse(job.waitForCompletion(false), "the job must fail");
    StringBuilder diagnostics = new StringBuilder();
    for (TaskCompletionEvent e : job.getTaskCompletionEvents(0, 100)) {
      for (String d : job.getTaskDiagnostics(e.getTaskAttemptId())) {
        diagnostics.append(d).append('\n');
      }
    }
    String want = ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + "=" + missing.getPath()
        + " does not exist";
    assertTrue(diagnostics.toString().contains(want), "diagnostics: " + diagnostics);
    assertFalse(missing.exists(), "nothing was created at the bad path");
  }

  /**
   * Test collector: attempt 0 of map 0 adds a poison record, publishes, then fails the task, as a
   * node dying right after writing would.
   */
  public static class DiesAfterPublishing<K, V> extends LustreMapOutputCollector<K, V> {
    private boolean poisoned;

    @Override
    public void init(Context context) throws IOException, ClassNotFoundException {
      super.init(context);
      org.apache.hadoop.mapred.TaskAttemptID a = context.getMapTask().getTaskID();
      poisoned = a.getTaskID().getId() == 0 && a.getId() == 0;
    }

    @Override
    @SuppressWarnings("unchecked")
    public void flush() throws IOException, InterruptedException, ClassNotFoundException {
      if (poisoned) {
        collect((K) new Text("POISON"), (V) new IntWritable(1_000_000), 0);
      }
      super.flush();
      if (poisoned) {
        throw new IOException("injected: attempt 0 of map 0 dies after publishing its output");
      }
    }
  }
}
