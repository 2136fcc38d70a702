/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.SecondarySort;
import org.apache.hadoop.examples.Sort;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.IntWritable;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.compress.DefaultCodec;
import org.apache.hadoop.mapreduce.Counters;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCounter;
import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;
import org.apache.hadoop.util.ToolRunner;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The same job with stock's shuffle and with the hpc shuffle, on a MiniMRYarnCluster with two
 * NodeManagers: the outputs must be identical file by file, the reducers must have shuffled the
 * same number of bytes and records, and the hpc run must have fetched them over the transport
 * without falling back. The two runs of a comparison go side by side on the cluster. Map-only
 * jobs are not compared here: TeraGen runs map-only under the hpc shuffle's cluster-wide
 * configuration in the e2e, drop-in and multi-host lanes.
 */
class ShuffleDifferentialIT {
  private static HpcMiniCluster cluster;

  @BeforeAll
  static void start() throws Exception {
    cluster = new HpcMiniCluster("shuffle-diff", 2, new Configuration(false));
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /** Runs a job into an output directory under the given configuration. */
  interface JobRun {
    void run(Configuration conf, Path out) throws Exception;
  }

  /** Runs {@code job} with both shuffles and compares what a user would compare. */
  private void compare(String name, JobRun job) throws Exception {
    Path stockOut = new Path("/diff/" + name + "/stock");
    Path hpcOut = new Path("/diff/" + name + "/hpc");
    HpcMiniCluster.runSideBySide(() -> {
      job.run(HpcMiniCluster.tagged(cluster.stock(), name + "-stock"), stockOut);
      return null;
    }, () -> {
      job.run(HpcMiniCluster.tagged(cluster.hpc(), name + "-hpc"), hpcOut);
      return null;
    });
    Counters stock = cluster.countersOf(name + "-stock");
    Counters hpc = cluster.countersOf(name + "-hpc");

    List<String> want = cluster.digest(stockOut);
    assertFalse(want.isEmpty(), name + ": stock run wrote nothing");
    assertEquals(want, cluster.digest(hpcOut), name + ": outputs differ");
    for (TaskCounter c : List.of(TaskCounter.REDUCE_SHUFFLE_BYTES,
        TaskCounter.REDUCE_INPUT_RECORDS, TaskCounter.MAP_OUTPUT_RECORDS)) {
      assertEquals(stock.findCounter(c).getValue(), hpc.findCounter(c).getValue(),
          name + ": " + c);
    }
    long shuffled = hpc.findCounter(TaskCounter.REDUCE_SHUFFLE_BYTES).getValue();
    assertEquals(0, hpc.findCounter(HpcShuffleCounter.FALLBACKS).getValue(),
        name + ": a reducer fell back to stock");
    assertEquals(shuffled, hpc.findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue()
        + hpc.findCounter(HpcShuffleCounter.BYTES_OVER_VERBS).getValue(),
        name + ": bytes fetched by the hpc shuffle");
    assertEquals(0, stock.findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue());
  }

  private static void runTool(Configuration conf, org.apache.hadoop.util.Tool tool,
      String... args) throws Exception {
    assertEquals(0, ToolRunner.run(conf, tool, args), tool.getClass().getSimpleName() + " "
        + String.join(" ", args));
  }

  private static void waitFor(Job job) throws Exception {
    HpcMiniCluster.waitFor(job);
  }

  private static Path text(String name, int lines, int vocabulary, long seed) throws IOException {
    return cluster.text(name, lines, vocabulary, seed);
  }

  private static Job wordCount(Configuration conf, Path in, Path out, int reducers)
      throws IOException {
    return HpcMiniCluster.wordCount(conf, in, out, reducers, 384 * 1024); // a few maps
  }

  @Test
  void teraSort() throws Exception {
    Path in = cluster.teraInput("tera", 2, 15_000, 11); // 3 MB, 2 maps
    compare("terasort", (conf, out) -> runTool(conf, new TeraSort(),
        "-Dmapreduce.job.reduces=3", in.toString(), out.toString()));
  }

  @Test
  void sortOfRandomWriterOutput() throws Exception {
    Path in = cluster.randomInput("random", 2, 1L << 20, 12); // 2 maps
    compare("sort", (conf, out) -> runTool(conf, new Sort<>(), "-r", "4", in.toString(),
        out.toString()));
  }

  /**
   * WordCount with its combiner and compressed map output (DefaultCodec): the reducers fetch
   * compressed segments and combine while merging. (The other jobs here shuffle uncompressed.)
   */
  @Test
  void wordCountWithCombinerAndCompressedMapOutput() throws Exception {
    Path in = text("words", 40_000, 5000, 1);
    compare("wordcount", (conf, out) -> {
      conf.setBoolean(MRJobConfig.MAP_OUTPUT_COMPRESS, true);
      conf.setClass(MRJobConfig.MAP_OUTPUT_COMPRESS_CODEC, DefaultCodec.class,
          org.apache.hadoop.io.compress.CompressionCodec.class);
      waitFor(wordCount(conf, in, out, 3));
    });
    // the expected output the fault tests compute without a stock job, checked against stock
    assertEquals(cluster.wordCountDigest(in, 3),
        cluster.digest(new Path("/diff/wordcount/stock")), "computed WordCount output");
  }

  @Test
  void secondarySortWithCustomComparator() throws Exception {
    Path in = new Path("/input/pairs");
    Random r = new Random(2);
    try (OutputStream o = cluster.fs().create(in, true)) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < 30_000; i++) {
        sb.append(r.nextInt(300) - 150).append(' ').append(r.nextInt(1000) - 500).append('\n');
      }
      o.write(sb.toString().getBytes(StandardCharsets.UTF_8));
    }
    compare("secondarysort", (conf, out) -> {
      Job job = Job.getInstance(conf, "secondarysort");
      job.setJarByClass(SecondarySort.class);
      job.setMapperClass(SecondarySort.MapClass.class);
      job.setReducerClass(SecondarySort.Reduce.class);
      job.setPartitionerClass(SecondarySort.FirstPartitioner.class);
      job.setGroupingComparatorClass(SecondarySort.FirstGroupingComparator.class);
      job.setMapOutputKeyClass(SecondarySort.IntPair.class);
      job.setMapOutputValueClass(IntWritable.class);
      job.setOutputKeyClass(Text.class);
      job.setOutputValueClass(IntWritable.class);
      job.setNumReduceTasks(3);
      FileInputFormat.addInputPath(job, in);
      FileInputFormat.setMaxInputSplitSize(job, 128 * 1024);
      FileOutputFormat.setOutputPath(job, out);
      waitFor(job);
    });
  }

  @Test
  void emptyPartitionsAndSixReducers() throws Exception {
    // three distinct words over six reducers: at most three partitions of each map output hold
    // data, so every fetch names empty partitions (six, not sixteen: 20 reducer JVMs fewer on
    // CI's two cores, the same paths)
    Path in = text("few-words", 5000, 3, 4);
    compare("six-reducers", (conf, out) -> waitFor(wordCount(conf, in, out, 6)));
    assertEquals(cluster.wordCountDigest(in, 6),
        cluster.digest(new Path("/diff/six-reducers/stock")), "empty part files expected too");
  }
}
