/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.examples.terasort.TeraGen;
import org.apache.hadoop.examples.terasort.TeraSort;
import org.apache.hadoop.examples.terasort.TeraValidate;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.v2.MiniMRYarnCluster;
import org.apache.hadoop.util.ToolRunner;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TeraGen, TeraSort and TeraValidate on a MiniDFSCluster + MiniMRYarnCluster with the stock
 * shuffle: the baseline every hadoop-hpc shuffle must reproduce byte for byte (issue 4 runs the
 * same jobs with its plugin and compares).
 */
class TeraSortIT {
  private static MiniDFSCluster dfs;
  private static MiniMRYarnCluster mr;

  @BeforeAll
  static void startClusters() throws Exception {
    Configuration conf = new Configuration();
    File base = new File(System.getProperty("test.build.data", "target/test-data"), "terasort");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
    dfs.waitActive();
    conf.set("fs.defaultFS", dfs.getFileSystem().getUri().toString());
    conf.setBoolean("mapreduce.map.speculative", false);
    conf.setBoolean("mapreduce.reduce.speculative", false);
    // A one-JVM cluster needs no 1 s heartbeats nor the client's 5 s completion poll: most of
    // a small job's time is waiting on them.
    conf.setInt("yarn.resourcemanager.nodemanagers.heartbeat-interval-ms", 200);
    conf.setInt("yarn.app.mapreduce.am.scheduler.heartbeat.interval-ms", 200);
    conf.setInt("mapreduce.client.completion.pollinterval", 200);
    conf.setInt("mapreduce.client.progressmonitor.pollinterval", 200);
    mr = new MiniMRYarnCluster("terasort-it", 1);
    mr.init(conf);
    mr.start();
  }

  @AfterAll
  static void stopClusters() {
    if (mr != null) {
      mr.stop();
    }
    if (dfs != null) {
      dfs.shutdown();
    }
  }

  @Test
  void sortedOutputValidates() throws Exception {
    JobConf conf = new JobConf(mr.getConfig());
    FileSystem fs = FileSystem.get(conf);
    long rows = 20_000;
    assertEquals(0, ToolRunner.run(conf, new TeraGen(),
        new String[] {"-Dmapreduce.job.maps=2", Long.toString(rows), "/tera/in"}));
    assertEquals(0, ToolRunner.run(conf, new TeraSort(),
        new String[] {"-Dmapreduce.job.reduces=3", "/tera/in", "/tera/out"}));
    assertEquals(0, ToolRunner.run(conf, new TeraValidate(),
        new String[] {"/tera/out", "/tera/report"}));

    List<String> report = new ArrayList<>();
    try (BufferedReader r = new BufferedReader(new InputStreamReader(
        fs.open(new Path("/tera/report/part-r-00000")), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        report.add(line);
      }
    }
    assertFalse(report.stream().anyMatch(l -> l.startsWith("error")), report.toString());
    assertTrue(report.stream().anyMatch(l -> l.startsWith("checksum")), report.toString());
    long outBytes = fs.getContentSummary(new Path("/tera/out")).getLength();
    // every TeraSort record is 100 bytes; the partition file is not in the output
    assertEquals(rows * 100, outBytes - partitionFileBytes(fs));
  }

  private static long partitionFileBytes(FileSystem fs) throws Exception {
    Path p = new Path("/tera/out/_partition.lst");
    return fs.exists(p) ? fs.getFileStatus(p).getLen() : 0;
  }
}
