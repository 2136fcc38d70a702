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
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.junit.jupiter.api.Test;

/** Files written and read with replication 3 over the transport, strict. */
class TransferSmokeIT {

  @Test
  void filesGoOverTheTransportWithTheirMirrors() throws Exception {
    Configuration conf = TransferCluster.conf("transfer-smoke", true);
    conf.setInt("dfs.replication", 3);
    try (MiniDFSCluster cluster = TransferCluster.start(conf, 3)) {
      FileSystem fs = cluster.getFileSystem();
      long before = serverBytesIn(cluster);
      long fallbacksBefore = TransferMetrics.client().fallbacks(); // other tests share the JVM
      int[] sizes = {0, 1, 511, 65537, TransferCluster.BLOCK, 3 * TransferCluster.BLOCK + 12345};
      long total = 0;
      Random r = new Random(42);
      for (int size : sizes) {
        byte[] data = new byte[size];
        r.nextBytes(data);
        Path p = new Path("/smoke/" + size);
        try (FSDataOutputStream out = fs.create(p)) {
          out.write(data);
        }
        byte[] back = new byte[size];
        try (FSDataInputStream in = fs.open(p)) {
          in.readFully(0, back);
        }
        assertArrayEquals(data, back, "content of " + p);
        total += size;
      }
      long in = serverBytesIn(cluster) - before;
      TransferMetrics client = TransferMetrics.client();
      StringBuilder all = new StringBuilder(client.toString());
      long mirrors = 0;
      long out = 0;
      for (DataNode dn : cluster.getDataNodes()) {
        TransferMetrics m = TransferCluster.metrics(dn);
        all.append('\n').append(m);
        mirrors += m.connections(TransferMetrics.Role.MIRROR);
        out += m.bytesOut();
        assertEquals(0, m.fallbacks(), m.toString());
      }
      System.out.println(all);
      assertEquals(0, client.fallbacks() - fallbacksBefore, client.toString());
      assertTrue(in >= 3 * total, "DataNodes received " + in + " stream bytes over the "
          + "transport for " + total + " bytes written with replication 3\n" + all);
      assertTrue(out >= total, "DataNodes sent " + out + " for " + total + " read\n" + all);
      assertTrue(mirrors >= 2 * 7, "mirror streams: " + mirrors + "\n" + all);
    }
  }

  private static long serverBytesIn(MiniDFSCluster cluster) {
    long n = 0;
    for (DataNode dn : cluster.getDataNodes()) {
      n += TransferCluster.metrics(dn).bytesIn();
    }
    return n;
  }
}
