/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.test.GenericTestUtils;
import org.junit.jupiter.api.Test;

/**
 * Files written and read with replication 3 over the transport, strict; the counters read in
 * process and as a user reads them, from the JMX beans.
 */
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
      beansSayTheSame(cluster, 3 * total);
    }
  }

  /**
   * What a user sees in JMX (/jmx of the DataNode's web server reads the same MBeans): each
   * DataNode's HpcDataTransfer-&lt;port&gt; bean and the process's client bean name the tcp
   * transport and count the streams and bytes. A bean shows a snapshot up to one metrics
   * period old (1 s in the test resources), so the totals are awaited first.
   */
  private static void beansSayTheSame(MiniDFSCluster cluster, long minBytesIn) throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    List<ObjectName> dns = new ArrayList<>();
    for (DataNode dn : cluster.getDataNodes()) {
      dns.add(new ObjectName("Hadoop:service=DataNode,name=HpcDataTransfer-"
          + dn.getXferAddress().getPort()));
    }
    GenericTestUtils.waitFor(() -> sum(jmx, dns, "TransportBytesIn") >= minBytesIn, 200, 30_000);
    for (ObjectName dn : dns) {
      StringBuilder shown = new StringBuilder(dn.toString());
      for (String a : new String[] {"tag.Transport", "ServerConnectionsOverTransport",
          "MirrorConnectionsOverTransport", "TransportBytesIn", "TransportBytesOut", "Fallbacks"}) {
        shown.append(' ').append(a).append('=').append(jmx.getAttribute(dn, a));
      }
      System.out.println(shown);
      assertEquals("tcp", jmx.getAttribute(dn, "tag.Transport"), dn.toString());
      assertEquals("", jmx.getAttribute(dn, "tag.StockTcpReason"), dn.toString());
      assertEquals(0L, jmx.getAttribute(dn, "Fallbacks"), dn.toString());
      assertEquals(0L, jmx.getAttribute(dn, "MirrorConnectionsOverStockTcp"), dn.toString());
    }
    assertTrue(sum(jmx, dns, "ServerConnectionsOverTransport") > 0);
    assertTrue(sum(jmx, dns, "MirrorConnectionsOverTransport") >= 2 * 7);
    assertTrue(sum(jmx, dns, "TransportBytesOut") > 0);
    Set<ObjectName> clients = jmx.queryNames(
        new ObjectName("Hadoop:service=*,name=HpcDataTransfer-client"), null);
    assertEquals(1, clients.size(), "client beans: " + clients);
    ObjectName client = clients.iterator().next();
    GenericTestUtils.waitFor(() -> sum(jmx, List.of(client), "ClientConnectionsOverTransport")
        > 0, 200, 30_000);
    assertEquals("tcp", jmx.getAttribute(client, "tag.Transport"));
  }

  private static long sum(MBeanServer jmx, List<ObjectName> beans, String attribute) {
    long n = 0;
    for (ObjectName b : beans) {
      try {
        n += (Long) jmx.getAttribute(b, attribute);
      } catch (JMException e) {
        throw new AssertionError(b + " " + attribute + ": " + e, e);
      }
    }
    return n;
  }

  private static long serverBytesIn(MiniDFSCluster cluster) {
    long n = 0;
    for (DataNode dn : cluster.getDataNodes()) {
      n += TransferCluster.metrics(dn).bytesIn();
    }
    return n;
  }
}
