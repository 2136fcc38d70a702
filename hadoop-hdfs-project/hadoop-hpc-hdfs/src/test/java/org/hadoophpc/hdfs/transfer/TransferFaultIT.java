/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSOutputStream;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Test;

/**
 * What must hold when things go wrong, over the transport: a DataNode of the pipeline dies
 * mid-write (pipeline recovery, the file intact), and a DataNode without the plugin (a client
 * that is not strict uses TCP for it, once counted as a failed connect, then from the negative
 * cache; the same bytes either way).
 */
class TransferFaultIT {

  @Test
  void aDataNodeDyingMidWriteLeavesTheFileIntact() throws Exception {
    Configuration conf = TransferCluster.conf("transfer-kill", true);
    conf.setInt("dfs.replication", 3);
    conf.setBoolean("dfs.client.block.write.replace-datanode-on-failure.enable", true);
    conf.set("dfs.client.block.write.replace-datanode-on-failure.policy", "ALWAYS");
    try (MiniDFSCluster cluster = TransferCluster.start(conf, 4)) {
      FileSystem fs = cluster.getFileSystem();
      long fallbacksBefore = TransferMetrics.client().fallbacks(); // other tests share the JVM
      byte[] data = new byte[3 * TransferCluster.BLOCK + 777];
      new Random(11).nextBytes(data);
      Path p = new Path("/fault/killed-mid-write");
      int half = data.length / 2;
      try (FSDataOutputStream out = fs.create(p)) {
        out.write(data, 0, half);
        out.hflush();
        DatanodeInfo[] pipeline = ((DFSOutputStream) out.getWrappedStream()).getPipeline();
        assertEquals(3, pipeline.length);
        DataNode victim = cluster.getDataNode(pipeline[1].getIpcPort());
        cluster.stopDataNode(victim.getDatanodeId().getXferAddr());
        out.write(data, half, data.length - half);
      }
      byte[] back = new byte[data.length];
      try (FSDataInputStream in = fs.open(p)) {
        in.readFully(0, back);
      }
      assertArrayEquals(data, back, "the file after a pipeline DataNode died");
      assertEquals(0, TransferMetrics.client().fallbacks() - fallbacksBefore,
          TransferMetrics.client().toString());
    }
  }

  @Test
  void aDataNodeWithoutThePluginIsReachedOverTcpUnlessStrict() throws Exception {
    Configuration conf = TransferCluster.conf("transfer-mixed", true);
    conf.setBoolean(TransferConf.STRICT_KEY, false);
    conf.set(TransferConf.CONNECT_TIMEOUT_KEY, "2s");
    conf.setInt("dfs.replication", 1);
    conf.set("dfs.datanode.plugins", ""); // no DataNode serves the transport
    try (MiniDFSCluster cluster = TransferCluster.start(conf, 1)) {
      Configuration client = new Configuration(conf);
      client.set("dfs.client.context", "mixed");
      TransferMetrics m = TransferMetrics.client();
      long failedBefore = m.fallbacks(TransferMetrics.Fallback.CONNECT_FAILED);
      long cachedBefore = m.fallbacks(TransferMetrics.Fallback.NEGATIVE_CACHED);
      try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), client)) {
        byte[] data = new byte[200_000];
        new Random(12).nextBytes(data);
        for (int i = 0; i < 3; i++) {
          Path p = new Path("/mixed/" + i);
          try (FSDataOutputStream out = fs.create(p)) {
            out.write(data);
          }
          byte[] back = new byte[data.length];
          try (FSDataInputStream in = fs.open(p)) {
            in.readFully(0, back);
          }
          assertArrayEquals(data, back);
        }
      }
      assertEquals(1, m.fallbacks(TransferMetrics.Fallback.CONNECT_FAILED) - failedBefore,
          m.toString());
      assertTrue(m.fallbacks(TransferMetrics.Fallback.NEGATIVE_CACHED) - cachedBefore >= 2,
          m.toString());
    }
  }
}
