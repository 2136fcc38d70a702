/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;

/**
 * MiniDFSClusters whose DataNodes serve DataTransfer over the tcp transport next to TCP. The tcp
 * transport needs its own port (transfer port + {@link #OFFSET}), so each DataNode gets a
 * transfer port whose partner is free too, instead of an ephemeral one.
 */
final class TransferCluster {
  static final int OFFSET = 1000;
  static final int BLOCK = 1024 * 1024;

  private TransferCluster() {
  }

  /** Configuration with the plugin, the client factory, strict, small blocks. */
  static Configuration conf(String name, boolean transfer) {
    Configuration conf = new HdfsConfiguration();
    File base = new File(System.getProperty("test.build.data", "target/test-data"), name);
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    conf.setLong("dfs.blocksize", BLOCK);
    conf.setInt("dfs.bytes-per-checksum", 512);
    conf.set("hadoop.hpc.transport", "tcp");
    if (transfer) {
      conf.set("dfs.datanode.plugins", RdmaDataTransferPlugin.class.getName());
      conf.set("hadoop.rpc.socket.factory.class.ClientProtocol",
          RdmaSocketFactory.class.getName());
      conf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
      conf.setInt(TransferConfigKeys.PORT_OFFSET_KEY, OFFSET);
    }
    return conf;
  }

  /** A started cluster of {@code n} DataNodes on transfer ports with free partners. */
  static MiniDFSCluster start(Configuration conf, int n) throws IOException {
    Configuration[] overlays = new Configuration[n];
    Set<Integer> taken = new HashSet<>();
    for (int i = 0; i < n; i++) {
      overlays[i] = new Configuration(false);
      overlays[i].set("dfs.datanode.address", "127.0.0.1:" + freePortPair(taken));
      overlays[i].set("dfs.datanode.http.address", "127.0.0.1:0");
      overlays[i].set("dfs.datanode.ipc.address", "127.0.0.1:0");
    }
    MiniDFSCluster c = new MiniDFSCluster.Builder(conf).numDataNodes(n)
        .checkDataNodeAddrConfig(true).dataNodeConfOverlays(overlays).build();
    c.waitActive();
    return c;
  }

  /**
   * A free port p with p + OFFSET free too, neither of them in {@code taken} (the pairs given to
   * the cluster's other DataNodes, to which both are added): else one DataNode's transport port
   * could be another's transfer port (seen once: 45325 + 1000 = 46325, the plugin then stayed
   * on stock TCP and strict clients reached the other DataNode's TCP server). Both lie below the
   * kernel's ephemeral range (from 32768 by default), chosen at random between 20000 and 31000:
   * a pair the kernel had handed out was free when checked but taken again before the DataNode
   * bound it (seen once: 37215 + 1000 = 38215 became the same DataNode's IPC port, an ephemeral
   * one), as ports the kernel picks for the cluster's other listeners and for connections come
   * from that range; ports below it are only ever taken by name.
   */
  static int freePortPair(Set<Integer> taken) throws IOException {
    InetAddress lo = InetAddress.getLoopbackAddress();
    java.util.Random random = new java.util.Random();
    for (int attempt = 0; attempt < 200; attempt++) {
      int p = 20000 + random.nextInt(11000 - OFFSET);
      if (taken.contains(p) || taken.contains(p + OFFSET)) {
        continue;
      }
      try (ServerSocket a = new ServerSocket(p, 1, lo);
           ServerSocket b = new ServerSocket(p + OFFSET, 1, lo)) {
        taken.add(p);
        taken.add(p + OFFSET);
        return p;
      } catch (IOException inUse) {
        // try another
      }
    }
    throw new IOException("no free port pair (p, p + " + OFFSET + ") between 20000 and 31000 on "
        + lo);
  }

  /** The endpoint metrics of {@code dn}. */
  static TransferMetrics metrics(DataNode dn) {
    return TransferMetrics.server(dn.getXferAddress().getPort());
  }
}
