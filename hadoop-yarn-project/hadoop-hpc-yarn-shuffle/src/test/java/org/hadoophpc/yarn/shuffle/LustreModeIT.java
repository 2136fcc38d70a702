/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.Sort;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileUtil;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.InputSplit;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobCounter;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileSplit;
import org.apache.hadoop.mapreduce.lib.input.TextInputFormat;
import org.apache.hadoop.util.ToolRunner;
import org.hadoophpc.fs.lustre.LustreConfigKeys;
import org.hadoophpc.fs.lustre.LustreFileSystem;
import org.hadoophpc.mapreduce.lustre.LustreMapOutputCollector;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.LustreApi;
import org.hadoophpc.nativeio.LustreLayout;
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
    Path tera = cluster.teraInput("tera", 2, 15_000, 21); // 3 MB, 2 maps
    Path in = copyToMount(tera, "tera");
    Path stockOut = new Path("/lustre/terasort/stock");
    Path ldOut = onMount("terasort-ld");
    Path nldOut = onMount("terasort-nld");
    HpcMiniCluster.runSideBySide(() -> {
      runTool(HpcMiniCluster.tagged(cluster.stock(), "terasort-stock"), new TeraSort(),
          "-Dmapreduce.job.reduces=2", tera.toString(), stockOut.toString());
      return null;
    }, () -> {
      runTool(HpcMiniCluster.tagged(localDisks(), "terasort-ld"), new TeraSort(),
          "-Dmapreduce.job.reduces=2", in.toString(), ldOut.toString());
      return null;
    }, () -> {
      runTool(HpcMiniCluster.tagged(noLocalDisks(), "terasort-nld"), new TeraSort(),
          "-Dmapreduce.job.reduces=2", in.toString(), nldOut.toString());
      return null;
    });
    Counters stock = cluster.countersOf("terasort-stock");
    Counters ld = cluster.countersOf("terasort-ld");
    Counters nld = cluster.countersOf("terasort-nld");
    checkModes("terasort", cluster.digest(stockOut), stock, ldOut, ld, nldOut, nld);
  }

  @Test
  void sortInBothModesMatchesStockOnHdfsWithHibdKeys() throws Exception {
    Path random = cluster.randomInput("random", 2, 1L << 20, 22); // 2 maps
    Path in = copyToMount(random, "random");
    Path stockOut = new Path("/lustre/sort/stock");
    // HiBD's spelling of the modes: mapred.rdma.shuffle.lustre = 1 | 2
    Configuration ld = cluster.hpc();
    ld.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY, "1");
    Path ldOut = onMount("sort-ld");
    Configuration nld = cluster.hpc();
    nld.set(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY, "2");
    nld.set(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR,
        LustreMapOutputCollector.class.getName());
    Path nldOut = onMount("sort-nld");
    HpcMiniCluster.runSideBySide(() -> {
      runTool(HpcMiniCluster.tagged(cluster.stock(), "sort-stock"), new Sort<>(), "-r", "2",
          random.toString(), stockOut.toString());
      return null;
    }, () -> {
      runTool(HpcMiniCluster.tagged(ld, "sort-ld"), new Sort<>(), "-r", "2", in.toString(),
          ldOut.toString());
      return null;
    }, () -> {
      runTool(HpcMiniCluster.tagged(nld, "sort-nld"), new Sort<>(), "-r", "2", in.toString(),
          nldOut.toString());
      return null;
    });
    checkModes("sort", cluster.digest(stockOut), cluster.countersOf("sort-stock"), ldOut,
        cluster.countersOf("sort-ld"), nldOut, cluster.countersOf("sort-nld"));
  }

  /**
   * Attempt 0 of map 0 publishes output with a poison record, then dies; speculation is on. The
   * reducers must read only the attempts the AM reported as succeeded.
   */
  @Test
  void anAttemptThatDiesAfterPublishingNeverReachesTheReducers() throws Exception {
    Path text = cluster.text("lustre-words", 20_000, 3000, 7);
    Path in = copyToMount(text, "words");
    Configuration c = noLocalDisks();
    c.set(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR, DiesAfterPublishing.class.getName());
    c.setBoolean(MRJobConfig.MAP_SPECULATIVE, true);
    c.setBoolean(MRJobConfig.REDUCE_SPECULATIVE, true);
    Path out = onMount("wordcount-nld");
    HpcMiniCluster.waitFor(HpcMiniCluster.wordCount(c, in, out, 2, 192 * 1024));
    Counters counters = cluster.lastJobCounters();
    assertTrue(counters.findCounter(JobCounter.NUM_FAILED_MAPS).getValue() >= 1,
        "the poisoned attempt failed");
    assertEquals(cluster.wordCountDigest(text, 2), cluster.digest(out),
        "a failed attempt's published output reached a reducer");
    awaitNothingPublished();
  }

  /**
   * The Lustre binding in a real job: input laid out over 4 OSTs (the liblustreapi test double,
   * through the real JNI path), OSTs 0-1 mapped to this host and 2-3 to a host that is not in
   * the cluster. Each split must name the host of its stripe's OST, exactly the splits on this
   * host's OSTs must run data-local, the output must be right, and the files the reducers
   * write on the mount must carry the configured layout.
   */
  @Test
  void splitsFollowTheStripeLayoutAndMapsRunNextToTheirOsts() throws Exception {
    String library = new File(System.getProperty("hadoop.hpc.native.test.lib.dir", ""),
        "liblustreapi_double.so").getAbsolutePath();
    assumeTrue(HpcNative.isAvailable() && new File(library).isFile(),
        "libhpcnative or the liblustreapi test double was not built (-Dnative.skip=true?)");
    File marker = new File(mount, ".lustre-double");
    Files.writeString(marker.toPath(), "osts=4 stripe_size=1048576 stripe_count=1\n");
    try {
      long stripe = 256 * 1024;
      Configuration c = noLocalDisks();
      c.set("fs.file.impl", LustreFileSystem.class.getName());
      c.setBoolean("fs.file.impl.disable.cache", true);
      c.set(LustreConfigKeys.MOUNT_KEY, mount.getPath());
      c.set(LustreConfigKeys.LIBRARY_KEY, library);
      c.setLong(LustreConfigKeys.STRIPE_SIZE_KEY, stripe);
      c.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, 4);
      c.set(LustreConfigKeys.OST_HOSTS_KEY, "0-1=localhost,2-3=" + FAR_HOST);
      c.setLong("fs.local.block.size", stripe);
      String nativeLib = "-D" + HpcNative.LIBRARY_PROPERTY + "="
          + System.getProperty(HpcNative.LIBRARY_PROPERTY);
      c.set(MRJobConfig.MAP_JAVA_OPTS, c.get(MRJobConfig.MAP_JAVA_OPTS) + " " + nativeLib);
      c.set(MRJobConfig.REDUCE_JAVA_OPTS, c.get(MRJobConfig.REDUCE_JAVA_OPTS) + " " + nativeLib);

      Path in = onMount("striped/words");
      FileSystem lfs = in.getFileSystem(c);
      assertTrue(((LustreFileSystem) lfs).lustreRaw().layoutsEnabled(),
          ((LustreFileSystem) lfs).lustreRaw().lustreState());
      Map<String, Long> want = writeWords(lfs, in, 4 * stripe);
      LustreLayout layout = LustreApi.probe(library).layout(new File(in.toUri()).getPath());
      assertEquals(stripe, layout.stripeSize());
      assertEquals(4, layout.stripeCount());

      Job job = HpcMiniCluster.wordCount(c, in, onMount("striped/out"), 2, Long.MAX_VALUE);
      List<InputSplit> splits = new TextInputFormat().getSplits(job);
      assertEquals(4, splits.size());
      int local = 0;
      for (InputSplit s : splits) {
        FileSplit split = (FileSplit) s;
        assertEquals(0, split.getStart() % stripe, "splits are stripe-aligned: " + split);
        long ost = layout.ost((int) (split.getStart() / stripe % 4));
        String host = ost < 2 ? "localhost" : FAR_HOST;
        assertEquals(List.of(host), List.of(split.getLocations()), "split " + split);
        local += ost < 2 ? 1 : 0;
      }
      assertEquals(2, local, "stripes 0-3 sit on OSTs 0-3 in turn");

      HpcMiniCluster.waitFor(job);
      Counters counters = job.getCounters();
      assertEquals(4, counters.findCounter(JobCounter.TOTAL_LAUNCHED_MAPS).getValue());
      assertEquals(local, counters.findCounter(JobCounter.DATA_LOCAL_MAPS).getValue(),
          "maps on this host's OSTs ran data-local, the others could not");
      assertEquals(want, readCounts(lfs, onMount("striped/out")));
      for (FileStatus part : lfs.listStatus(onMount("striped/out"),
          p -> p.getName().startsWith("part-"))) {
        LustreLayout written = LustreApi.probe(library).layout(
            new File(part.getPath().toUri()).getPath());
        assertEquals(stripe, written.stripeSize(), part.getPath() + " laid out by its task");
        assertEquals(4, written.stripeCount(), part.getPath() + " laid out by its task");
      }
    } finally {
      Files.delete(marker.toPath());
    }
  }

  private static final String FAR_HOST = "ost-host-not-in-this-cluster.invalid";

  /** Writes lines of words until the file holds at least {@code bytes}; returns the counts. */
  private static Map<String, Long> writeWords(FileSystem fs, Path p, long bytes)
      throws IOException {
    Map<String, Long> counts = new TreeMap<>();
    Random r = new Random(11);
    long written = 0;
    try (OutputStream out = fs.create(p, true)) {
      while (written < bytes) {
        StringBuilder line = new StringBuilder();
        for (int w = 0, n = 1 + r.nextInt(10); w < n; w++) {
          String word = "w" + r.nextInt(500);
          counts.merge(word, 1L, Long::sum);
          line.append(w == 0 ? "" : " ").append(word);
        }
        byte[] b = line.append('\n').toString().getBytes(StandardCharsets.UTF_8);
        out.write(b);
        written += b.length;
      }
    }
    return counts;
  }

  private static Map<String, Long> readCounts(FileSystem fs, Path dir) throws IOException {
    Map<String, Long> counts = new TreeMap<>();
    for (FileStatus part : fs.listStatus(dir, p -> p.getName().startsWith("part-"))) {
      try (BufferedReader reader = new BufferedReader(new InputStreamReader(
          fs.open(part.getPath()), StandardCharsets.UTF_8))) {
        for (String line; (line = reader.readLine()) != null; ) {
          String[] f = line.split("\t");
          assertTrue(counts.put(f[0], Long.parseLong(f[1])) == null, "duplicate " + f[0]);
        }
      }
    }
    return counts;
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
