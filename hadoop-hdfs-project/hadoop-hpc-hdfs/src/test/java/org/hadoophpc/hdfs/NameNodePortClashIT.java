/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.hadoophpc.tools.DaemonCheck;
import org.junit.jupiter.api.Test;

/**
 * A second NameNode/DataNode on the ports of a running HDFS is refused before it starts, with
 * the port, its configuration key and the daemon named (what {@code sbin/start-dfs.sh} prints).
 */
class NameNodePortClashIT {

  @Test
  void secondClusterOnSamePortsIsRefusedByName() throws Exception {
    Configuration conf = new HdfsConfiguration();
    File base = new File(System.getProperty("test.build.data", "target/test-data"), "clash");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    try (MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build()) {
      cluster.waitActive();
      FileSystem fs = cluster.getFileSystem();
      byte[] data = "hadoop-hpc".getBytes(StandardCharsets.UTF_8);
      try (FSDataOutputStream out = fs.create(new Path("/probe"))) {
        out.write(data);
      }
      byte[] back = new byte[data.length];
      try (FSDataInputStream in = fs.open(new Path("/probe"))) {
        in.readFully(back);
      }
      assertArrayEquals(data, back);

      // What a second cluster's configuration would say: the same addresses.
      Configuration second = new Configuration(false);
      InetSocketAddress rpc = cluster.getNameNode().getNameNodeAddress();
      InetSocketAddress http = cluster.getNameNode().getHttpAddress();
      second.set("dfs.namenode.rpc-address", "127.0.0.1:" + rpc.getPort());
      second.set("dfs.namenode.http-address", "127.0.0.1:" + http.getPort());
      List<String> clashes = DaemonCheck.findClashes(second, "namenode");
      assertEquals(2, clashes.size(), clashes.toString());
      assertTrue(clashes.get(0).contains("port 127.0.0.1:" + rpc.getPort()
          + " (dfs.namenode.rpc-address) is already in use"), clashes.get(0));
      assertTrue(clashes.get(1).contains("(dfs.namenode.http-address)"), clashes.get(1));

      int dnXfer = cluster.getDataNodes().get(0).getXferAddress().getPort();
      second.set("dfs.datanode.address", "127.0.0.1:" + dnXfer);
      second.set("dfs.datanode.http.address", "127.0.0.1:0");
      second.set("dfs.datanode.ipc.address", "127.0.0.1:0");
      List<String> dn = DaemonCheck.findClashes(second, "datanode");
      assertEquals(1, dn.size(), dn.toString());
      assertTrue(dn.get(0).startsWith("datanode cannot start: port 127.0.0.1:" + dnXfer), dn.get(0));
    }
  }
}
