/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.Random;

import javax.net.SocketFactory;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSOutputStream;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.ClientProtocol;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.protocol.LocatedBlock;
import org.apache.hadoop.hdfs.protocol.datatransfer.Sender;
import org.apache.hadoop.hdfs.protocol.proto.DataTransferProtos.BlockOpResponseProto;
import org.apache.hadoop.hdfs.protocol.proto.DataTransferProtos.Status;
import org.apache.hadoop.hdfs.protocolPB.PBHelperClient;
import org.apache.hadoop.hdfs.security.token.block.BlockTokenIdentifier;
import org.apache.hadoop.hdfs.server.blockmanagement.BlockManager;
import org.apache.hadoop.hdfs.server.datanode.CachingStrategy;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.token.Token;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

/**
 * What must hold when things go wrong, over the transport: a DataNode of the pipeline dies
 * mid-write (pipeline recovery, the file intact), and a DataNode without the plugin (a client
 * that is not strict uses TCP for it, once counted as a failed connect, then from the negative
 * cache; the same bytes either way), a corrupt replica (the client's checksum check fails, the
 * read is served by another replica and the NameNode told), and block access tokens (a read
 * with a wrong or no token refused by the DataNode over the transport, as over TCP).
 */
class TransferFaultIT {
  /** Replication 3 on 3 DataNodes with block access tokens: the corruption and token tests. */
  private static MiniDFSCluster guarded;

  private static synchronized MiniDFSCluster guarded() throws IOException {
    if (guarded == null) {
      Configuration conf = TransferCluster.conf("transfer-guarded", true);
      conf.setInt("dfs.replication", 3);
      conf.setBoolean("dfs.block.access.token.enable", true);
      guarded = TransferCluster.start(conf, 3);
    }
    return guarded;
  }

  @AfterAll
  static void stopGuarded() {
    if (guarded != null) {
      guarded.close();
    }
  }

  /**
   * Two of a block's three replicas corrupted on disk: every read still returns the file's
   * bytes (the client's checksum check over the transport catches a bad replica and reads
   * another), and the client reports the bad replicas to the NameNode. The NameNode orders the
   * replicas at random here (every DataNode is on the client's host), so reads repeat until
   * one met a bad replica (2 in 3 do; 30 reads all missing them: 5e-15).
   */
  @Test
  void aCorruptReplicaIsCaughtReadFromAnotherAndReported() throws Exception {
    MiniDFSCluster cluster = guarded();
    DistributedFileSystem fs = cluster.getFileSystem();
    byte[] data = new byte[TransferCluster.BLOCK / 2 + 1234];
    new Random(13).nextBytes(data);
    Path p = new Path("/fault/corrupt");
    try (FSDataOutputStream out = fs.create(p)) {
      out.write(data);
    }
    DFSTestUtil.waitReplication(fs, p, (short) 3);
    ExtendedBlock block = DFSTestUtil.getFirstBlock(fs, p);
    cluster.corruptReplica(0, block);
    cluster.corruptReplica(1, block);
    TransferMetrics client = TransferMetrics.client();
    long inBefore = client.bytesIn();
    long fallbacksBefore = client.fallbacks();
    // the NameNode's count of the block's corrupt replicas, updated by the client's report (its
    // CorruptBlocks metric is refreshed on a timer)
    BlockManager blocks = cluster.getNamesystem().getBlockManager();
    int reads = 0;
    while (blocks.numCorruptReplicas(block.getLocalBlock()) == 0 && reads < 30) {
      byte[] back = new byte[data.length];
      try (FSDataInputStream in = fs.open(p)) {
        in.readFully(0, back);
      }
      reads++;
      assertArrayEquals(data, back, "read " + reads + " of a file with two corrupt replicas");
    }
    assertTrue(blocks.numCorruptReplicas(block.getLocalBlock()) > 0,
        "no corrupt replica reported to the NameNode after " + reads + " reads");
    assertTrue(client.bytesIn() - inBefore >= (long) reads * data.length,
        "the reads went over the transport: " + client);
    assertEquals(0, client.fallbacks() - fallbacksBefore, client.toString());
  }

  /**
   * A DataNode refuses a read over the transport whose block token is wrong or missing, and
   * serves the one with the token the NameNode gave: DataTransfer's own op, sent through the
   * client's socket factory (the transport, strict) without DFSClient in between.
   */
  @Test
  void aReadWithAWrongOrMissingBlockTokenIsRefused() throws Exception {
    MiniDFSCluster cluster = guarded();
    DistributedFileSystem fs = cluster.getFileSystem();
    Path p = new Path("/fault/token");
    DFSTestUtil.createFile(fs, p, 100_000, (short) 3, 14);
    LocatedBlock lb = fs.getClient().getLocatedBlocks(p.toString(), 0).get(0);
    Token<BlockTokenIdentifier> good = lb.getBlockToken();
    Token<BlockTokenIdentifier> wrong = new Token<>(good.getIdentifier(), new byte[20],
        good.getKind(), good.getService());
    Token<BlockTokenIdentifier> none = new Token<>();
    DatanodeInfo dn = lb.getLocations()[0];
    TransferMetrics server = TransferMetrics.server(dn.getXferPort());
    long served = server.connections(TransferMetrics.Role.SERVER);
    Configuration conf = cluster.getConfiguration(0);
    assertEquals(Status.ERROR_ACCESS_TOKEN, readOp(conf, dn, lb.getBlock(), wrong), "wrong");
    assertEquals(Status.ERROR_ACCESS_TOKEN, readOp(conf, dn, lb.getBlock(), none), "none");
    assertEquals(Status.SUCCESS, readOp(conf, dn, lb.getBlock(), good), "the NameNode's");
    assertEquals(3, server.connections(TransferMetrics.Role.SERVER) - served,
        "streams the DataNode served over the transport: " + server);
  }

  /** The status of a readBlock op with {@code token}, sent as DFSClient sends it. */
  private static Status readOp(Configuration conf, DatanodeInfo dn, ExtendedBlock block,
      Token<BlockTokenIdentifier> token) throws IOException {
    SocketFactory factory = NetUtils.getSocketFactory(conf, ClientProtocol.class);
    assertTrue(factory instanceof RdmaSocketFactory, factory.getClass().getName());
    try (Socket s = factory.createSocket()) {
      NetUtils.connect(s, NetUtils.createSocketAddr(dn.getXferAddr()), 10_000);
      s.setSoTimeout(10_000);
      DataOutputStream out = new DataOutputStream(new BufferedOutputStream(
          NetUtils.getOutputStream(s, 10_000)));
      new Sender(out).readBlock(block, token, "transfer-fault-it", 0, 1, true,
          CachingStrategy.newDefaultStrategy());
      out.flush();
      DataInputStream in = new DataInputStream(NetUtils.getInputStream(s));
      return BlockOpResponseProto.parseFrom(PBHelperClient.vintPrefixed(in)).getStatus();
    }
  }

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
    conf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, false);
    conf.set(TransferConfigKeys.CONNECT_TIMEOUT_KEY, "2s");
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
