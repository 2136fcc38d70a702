/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.StringTokenizer;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.WordCount;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.io.BytesWritable;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.SequenceFile;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.Cluster;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.JobStatus;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.mapreduce.lib.partition.HashPartitioner;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationReport;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleConsumer;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;

/**
 * MiniDFSCluster + MiniMRYarnCluster whose NodeManagers run {@link HpcShuffleHandler} as their
 * mapreduce_shuffle, several NodeManagers sharing this host with the shipped port settings. Jobs
 * choose their shuffle with {@link #stock} or {@link #hpc}.
 */
final class HpcMiniCluster implements AutoCloseable {

  private static final String LEAN_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

  final MiniDFSCluster dfs;
  final MiniMRYarnCluster mr;

  private static final String SHUFFLE_CLASS_KEY = String.format(
      YarnConfiguration.NM_AUX_SERVICE_FMT, ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID);

  /**
   * MiniMRYarnCluster sets mapreduce_shuffle's class to stock's handler; this configuration keeps
   * ours there, the way a site's yarn-site.xml names it.
   */
  private static final class KeepsHpcShuffle extends Configuration {
    private final String service;

    KeepsHpcShuffle(Configuration base, Class<? extends HpcShuffleHandler> service) {
      super(base);
      this.service = service.getName();
      set(SHUFFLE_CLASS_KEY, this.service);
    }

    @Override
    public void set(String name, String value, String source) {
      if (SHUFFLE_CLASS_KEY.equals(name) && service != null) {
        value = service;
      }
      super.set(name, value, source);
    }
  }

  HpcMiniCluster(String name, int nodeManagers, Configuration extra) throws IOException {
    this(name, nodeManagers, extra, HpcShuffleHandler.class);
  }

  HpcMiniCluster(String name, int nodeManagers, Configuration extra,
      Class<? extends HpcShuffleHandler> service) throws IOException {
    DefaultMetricsSystem.setMiniClusterMode(true);
    Configuration conf = new Configuration();
    File base = new File(System.getProperty("test.build.data", "target/test-data"), name);
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    dfs.waitActive();
    conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    // Few, lean JVMs at a time: a build machine may have two cores, and a dozen task JVMs
    // starting together make every job crawl.
    conf.setInt(YarnConfiguration.NM_PMEM_MB, 2048);
    conf.setInt(YarnConfiguration.YARN_MINICLUSTER_NM_PMEM_MB, 2048);
    conf.setInt(YarnConfiguration.RM_SCHEDULER_MINIMUM_ALLOCATION_MB, 256);
    conf.setInt(MRJobConfig.MR_AM_VMEM_MB, 512);
    conf.set(MRJobConfig.MR_AM_COMMAND_OPTS, "-Xmx320m " + LEAN_JVM);
    conf.setInt(MRJobConfig.MAP_MEMORY_MB, 512);
    conf.setInt(MRJobConfig.REDUCE_MEMORY_MB, 512);
    conf.set(MRJobConfig.MAP_JAVA_OPTS, "-Xmx300m " + LEAN_JVM);
    conf.set(MRJobConfig.REDUCE_JAVA_OPTS, "-Xmx300m " + LEAN_JVM);
    conf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 0.8f);
    quickHeartbeats(conf);
    // A finished job's container logs are deleted when it ends, not 3 hours later: a pending
    // deletion keeps the application in its NodeManager, whose stop then waits for it (stock's
    // cleanUpApplicationsOnNMShutDown, then NonAggregatingLogHandler: 17 s per NodeManager).
    // No test here reads container logs (task diagnostics come from the ApplicationMaster).
    conf.setLong(YarnConfiguration.NM_LOG_RETAIN_SECONDS, 0);
    // the shipped port settings: each NodeManager's service follows its own stock port
    for (java.util.Map.Entry<String, String> e : extra) {
      conf.set(e.getKey(), e.getValue());
    }
    mr = new MiniMRYarnCluster(name, nodeManagers);
    mr.init(new KeepsHpcShuffle(conf, service));
    mr.start();
  }

  /**
   * Heartbeats and polls of a cluster that lives in one JVM: a job waits on each of them several
   * times (container grants, task events, the client's completion poll of 5 s), which on a
   * one-host mini cluster is most of a small job's time. Nothing the shuffle does depends on them.
   */
  static void quickHeartbeats(Configuration conf) {
    conf.setInt(YarnConfiguration.RM_NM_HEARTBEAT_INTERVAL_MS, 200);
    conf.setInt(MRJobConfig.MR_AM_TO_RM_HEARTBEAT_INTERVAL_MS, 200);
    conf.setInt(Job.COMPLETION_POLL_INTERVAL_KEY, 200);
    conf.setInt(Job.PROGRESS_MONITOR_POLL_INTERVAL_KEY, 200);
    // two jobs side by side (see runSideBySide): each needs its ApplicationMaster running
    conf.setFloat("yarn.scheduler.capacity.maximum-am-resource-percent", 0.5f);
  }

  /** The longest a group of side-by-side jobs may take (each takes about a minute here). */
  private static final long SIDE_BY_SIDE_LIMIT_NANOS = TimeUnit.MINUTES.toNanos(10);

  /**
   * Runs {@code runs} at the same time, each job on its own thread (the cluster has room for
   * two), and returns when all ended; the first failure is rethrown, and a group still running
   * after 10 minutes fails the test (its threads are interrupted) instead of hanging the build.
   * Independent jobs overlap their waits for containers and JVMs, so a comparison costs about
   * one job's time, not two.
   */
  @SafeVarargs
  static void runSideBySide(Callable<Void>... runs) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(runs.length);
    long deadline = System.nanoTime() + SIDE_BY_SIDE_LIMIT_NANOS;
    try {
      List<Future<Void>> done = new ArrayList<>();
      for (Callable<Void> r : runs) {
        done.add(pool.submit(r));
      }
      for (Future<Void> f : done) {
        try {
          f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
          throw new AssertionError("jobs run side by side still running after 10 minutes", e);
        } catch (ExecutionException e) {
          if (e.getCause() instanceof Exception ex) {
            throw ex;
          }
          throw new AssertionError(e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Tags the jobs run under {@code conf} (YARN application tags, lower case) so that
   * {@link #countersOf} finds them whichever jobs ran before or beside them.
   */
  static Configuration tagged(Configuration conf, String tag) {
    conf.set(MRJobConfig.JOB_TAGS, tag.toLowerCase(Locale.ROOT));
    return conf;
  }

  /** Counters of the one job tagged {@code tag} (see {@link #tagged}). */
  Counters countersOf(String tag) throws IOException, InterruptedException {
    List<ApplicationReport> apps;
    try (YarnClient yarn = YarnClient.createYarnClient()) {
      yarn.init(mr.getConfig());
      yarn.start();
      apps = yarn.getApplications(null, null,
          Set.of(tag.toLowerCase(Locale.ROOT)));
    } catch (YarnException e) {
      throw new IOException(e);
    }
    if (apps.size() != 1) {
      throw new AssertionError(apps.size() + " jobs tagged " + tag + ", not one");
    }
    ApplicationId app = apps.get(0).getApplicationId();
    Cluster c = new Cluster(mr.getConfig());
    try {
      return c.getJob(new JobID(String.valueOf(app.getClusterTimestamp()), app.getId()))
          .getCounters();
    } finally {
      c.close();
    }
  }

  /** A job configuration with stock's shuffle. */
  Configuration stock() {
    return new Configuration(mr.getConfig());
  }

  /** A job configuration with the hpc shuffle. */
  Configuration hpc() {
    Configuration c = new Configuration(mr.getConfig());
    enableHpc(c);
    return c;
  }

  static void enableHpc(Configuration c) {
    c.set(MRConfig.SHUFFLE_CONSUMER_PLUGIN, HpcShuffleConsumer.class.getName());
  }

  /** WordCount (examples' mapper, combiner and reducer) over {@code in}, splits of {@code split}. */
  static Job wordCount(Configuration conf, Path in, Path out, int reducers, long split)
      throws IOException {
    Job job = Job.getInstance(conf, "wordcount");
    job.setJarByClass(WordCount.class);
    job.setMapperClass(WordCount.TokenizerMapper.class);
    job.setCombinerClass(WordCount.IntSumReducer.class);
    job.setReducerClass(WordCount.IntSumReducer.class);
    job.setOutputKeyClass(Text.class);
    job.setOutputValueClass(IntWritable.class);
    job.setNumReduceTasks(reducers);
    FileInputFormat.addInputPath(job, in);
    FileInputFormat.setMaxInputSplitSize(job, split);
    FileOutputFormat.setOutputPath(job, out);
    return job;
  }

  /** Runs {@code job} and fails the test with its failure info when it fails. */
  static void waitFor(Job job) throws Exception {
    if (!job.waitForCompletion(false)) {
      throw new AssertionError(job.getJobName() + " failed: " + job.getStatus().getFailureInfo());
    }
  }

  /** Writes {@code lines} lines of 1 to 12 words "w<n>", n below {@code vocabulary}. */
  Path text(String name, int lines, int vocabulary, long seed) throws IOException {
    Path p = new Path("/input/" + name);
    Random r = new Random(seed);
    try (OutputStream out = fs().create(p, true)) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < lines; i++) {
        sb.setLength(0);
        int words = 1 + r.nextInt(12);
        for (int w = 0; w < words; w++) {
          sb.append(w == 0 ? "" : " ").append("w").append(r.nextInt(vocabulary));
        }
        sb.append('\n');
        out.write(sb.toString().getBytes(StandardCharsets.UTF_8));
      }
    }
    return p;
  }

  FileSystem fs() throws IOException {
    return dfs.getFileSystem();
  }

  /**
   * Writes TeraSort input in TeraGen's layout without a job: {@code files} files (one split and
   * map each) of {@code rows} 100-byte rows, a 10-byte random key, then the row's number in hex
   * and filler. A generating job costs a differential test an AM and its maps; only the sort is
   * compared.
   */
  Path teraInput(String name, int files, int rows, long seed) throws IOException {
    Path dir = new Path("/input/" + name);
    Random r = new Random(seed);
    byte[] row = new byte[100];
    long number = 0;
    for (int f = 0; f < files; f++) {
      Path part = new Path(dir, String.format(Locale.ROOT, "part-m-%05d", f));
      try (OutputStream out = new BufferedOutputStream(fs().create(part, true), 1 << 16)) {
        for (int i = 0; i < rows; i++, number++) {
          byte[] key = new byte[10];
          r.nextBytes(key);
          System.arraycopy(key, 0, row, 0, key.length);
          byte[] id = String.format(Locale.ROOT, "%032X", number)
              .getBytes(StandardCharsets.US_ASCII);
          System.arraycopy(id, 0, row, 10, id.length);
          Arrays.fill(row, 10 + id.length, row.length - 2, (byte) ('A' + number % 26));
          row[row.length - 2] = '\r';
          row[row.length - 1] = '\n';
          out.write(row);
        }
      }
    }
    return dir;
  }

  /**
   * Writes Sort's input as RandomWriter lays it out, without a job: {@code files}
   * uncompressed SequenceFiles of random {@code BytesWritable} keys (10-1000 bytes) and values
   * (0-20000 bytes), each file holding at least {@code bytesPerFile} of keys and values.
   */
  Path randomInput(String name, int files, long bytesPerFile, long seed) throws IOException {
    Path dir = new Path("/input/" + name);
    Random r = new Random(seed);
    for (int f = 0; f < files; f++) {
      Path part = new Path(dir, String.format(Locale.ROOT, "part-m-%05d", f));
      try (SequenceFile.Writer w = SequenceFile.createWriter(mr.getConfig(),
          SequenceFile.Writer.file(part.makeQualified(fs().getUri(), fs().getWorkingDirectory())),
          SequenceFile.Writer.keyClass(BytesWritable.class),
          SequenceFile.Writer.valueClass(BytesWritable.class),
          SequenceFile.Writer.compression(SequenceFile.CompressionType.NONE))) {
        for (long written = 0; written < bytesPerFile;) {
          byte[] key = new byte[10 + r.nextInt(991)];
          byte[] value = new byte[r.nextInt(20001)];
          r.nextBytes(key);
          r.nextBytes(value);
          w.append(new BytesWritable(key), new BytesWritable(value));
          written += key.length + value.length;
        }
      }
    }
    return dir;
  }

  /** Counters of the most recently submitted job. */
  Counters lastJobCounters() throws IOException, InterruptedException {
    Cluster c = new Cluster(mr.getConfig());
    try {
      JobStatus last = null;
      for (JobStatus s : c.getAllJobStatuses()) {
        if (last == null || s.getJobID().compareTo(last.getJobID()) > 0) {
          last = s;
        }
      }
      JobID id = last.getJobID();
      return c.getJob(id).getCounters();
    } finally {
      c.close();
    }
  }

  /**
   * What a user compares between two runs: for each output file (sorted by name, hidden files
   * and _SUCCESS left out) its name and the SHA-256 of its bytes; for SequenceFiles, of their
   * records' raw key and value bytes (the header carries a random sync marker).
   */
  List<String> digest(Path dir) throws IOException {
    FileSystem fs = dir.getFileSystem(mr.getConfig());
    FileStatus[] files = fs.listStatus(dir, p -> !p.getName().startsWith("_")
        && !p.getName().startsWith("."));
    Arrays.sort(files);
    List<String> out = new ArrayList<>();
    for (FileStatus f : files) {
      out.add(f.getPath().getName() + " " + sha(fs, f.getPath()));
    }
    return out;
  }

  /**
   * What {@link #wordCount} must write for {@code in} with {@code reducers} reducers, in
   * {@link #digest}'s form, computed here without a job: the examples' mapper splits lines with
   * a StringTokenizer, the job's default {@link HashPartitioner} places each word,
   * each part file holds its words in Text's byte order as "word TAB count" lines
   * (TextOutputFormat), and a reducer without words still writes its empty part file.
   */
  List<String> wordCountDigest(Path in, int reducers) throws IOException {
    Map<String, Integer> counts = new HashMap<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
        fs().open(in), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        StringTokenizer words = new StringTokenizer(line);
        while (words.hasMoreTokens()) {
          counts.merge(words.nextToken(), 1, Integer::sum);
        }
      }
    }
    List<TreeMap<String, Integer>> parts = new ArrayList<>();
    for (int i = 0; i < reducers; i++) {
      parts.add(new TreeMap<>()); // the words are ASCII: String order is Text's
    }
    HashPartitioner<Text, IntWritable> partitioner = new HashPartitioner<>(); // the job's default
    counts.forEach((w, n) -> parts.get(partitioner.getPartition(new Text(w), null, reducers))
        .put(w, n));
    List<String> out = new ArrayList<>();
    for (int i = 0; i < reducers; i++) {
      StringBuilder sb = new StringBuilder();
      parts.get(i).forEach((w, n) -> sb.append(w).append('\t').append(n).append('\n'));
      byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
      out.add(String.format("part-r-%05d bytes:%d:%s", i, bytes.length,
          HexFormat.of().formatHex(sha256().digest(bytes))));
    }
    return out;
  }

  private static MessageDigest sha256() throws IOException {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IOException(e);
    }
  }

  private String sha(FileSystem fs, Path p) throws IOException {
    MessageDigest md = sha256();
    byte[] magic = new byte[3];
    int n;
    try (InputStream in = fs.open(p)) {
      n = in.readNBytes(magic, 0, 3);
    }
    if (n == 3 && magic[0] == 'S' && magic[1] == 'E' && magic[2] == 'Q') {
      long records = 0;
      try (SequenceFile.Reader r = new SequenceFile.Reader(fs.getConf(),
          SequenceFile.Reader.file(p))) {
        DataOutputBuffer key = new DataOutputBuffer();
        SequenceFile.ValueBytes value = r.createValueBytes();
        DataOutputBuffer valueOut = new DataOutputBuffer();
        while (r.nextRaw(key, value) >= 0) {
          md.update(key.getData(), 0, key.getLength());
          valueOut.reset();
          value.writeUncompressedBytes(valueOut);
          md.update(valueOut.getData(), 0, valueOut.getLength());
          key.reset();
          records++;
        }
      }
      return "seq:" + records + ":" + HexFormat.of().formatHex(md.digest());
    }
    try (InputStream in = fs.open(p)) {
      byte[] buf = new byte[1 << 16];
      long total = 0;
      for (int k; (k = in.read(buf)) > 0; ) {
        md.update(buf, 0, k);
        total += k;
      }
      return "bytes:" + total + ":" + HexFormat.of().formatHex(md.digest());
    }
  }

  @Override
  public void close() {
    if (mr != null) {
      mr.stop();
    }
    if (dfs != null) {
      dfs.shutdown();
    }
  }
}
