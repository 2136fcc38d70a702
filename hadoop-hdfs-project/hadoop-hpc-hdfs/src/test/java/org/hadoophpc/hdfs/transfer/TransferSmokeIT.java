/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.ToLongFunction;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.client.HdfsDataInputStream;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.test.GenericTestUtils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Files written and read with replication 3 over the transport, strict; the counters read in
 * process and as a user reads them, from the JMX beans.
 */
class TransferSmokeIT {
  private static Configuration conf;
  private static MiniDFSCluster cluster;

  @BeforeAll
  static void startCluster() throws Exception {
    conf = TransferCluster.conf("transfer-smoke", true);
    conf.setInt("dfs.replication", 3);
    // the legacy short-circuit reader (no libhadoop.so needed): who may ask for block paths
    conf.set("dfs.block.local-path-access.user",
        UserGroupInformation.getCurrentUser().getShortUserName());
    cluster = TransferCluster.start(conf, 3);
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Differential: a file written over the transport with FileContext (hflush, hsync, then an
   * append through FileSystem) reads back byte for byte the same over the transport and with a
   * stock client (plain TCP), whole and by pread; a file the stock client wrote reads the same
   * over the transport. No stream fell back to TCP.
   */
  @Test
  void theTransportAndStockTcpSeeTheSameBytes() throws Exception {
    Configuration stockConf = new Configuration(conf);
    stockConf.unset("hadoop.rpc.socket.factory.class.ClientProtocol");
    stockConf.set("dfs.client.context", "stock-tcp"); // its own peer cache
    long fallbacksBefore = TransferMetrics.client().fallbacks();
    long streamsBefore = TransferMetrics.client().connections(TransferMetrics.Role.CLIENT);
    long[] countedBefore = jobCounters();
    Random r = new Random(7);
    byte[] data = new byte[2 * TransferCluster.BLOCK + 777];
    r.nextBytes(data);
    int[] cuts = {100_000, TransferCluster.BLOCK + 5, 2 * TransferCluster.BLOCK};
    FileContext fc = FileContext.getFileContext(cluster.getURI(), conf);
    try (FileSystem hpc = FileSystem.newInstance(cluster.getURI(), conf);
        FileSystem stock = FileSystem.newInstance(cluster.getURI(), stockConf)) {
      Path p = new Path("/diff/flushed");
      try (FSDataOutputStream out = fc.create(p, EnumSet.of(CreateFlag.CREATE),
          Options.CreateOpts.createParent())) {
        out.write(data, 0, cuts[0]);
        out.hflush();
        assertArrayEquals(Arrays.copyOf(data, cuts[0]), head(stock, p, cuts[0]),
            "hflushed bytes as a stock reader sees them");
        out.write(data, cuts[0], cuts[1] - cuts[0]);
        out.hsync();
        assertArrayEquals(Arrays.copyOf(data, cuts[1]), head(hpc, p, cuts[1]),
            "hsynced bytes over the transport");
        out.write(data, cuts[1], cuts[2] - cuts[1]);
      }
      try (FSDataOutputStream out = hpc.append(p)) {
        out.write(data, cuts[2], data.length - cuts[2]);
      }
      assertArrayEquals(data, all(stock, p), "stock TCP reader");
      assertArrayEquals(data, all(hpc, p), "transport reader");
      try (FSDataInputStream in = fc.open(p)) {
        byte[] b = new byte[data.length];
        in.readFully(0, b);
        assertArrayEquals(data, b, "FileContext over the transport");
      }
      try (FSDataInputStream a = hpc.open(p); FSDataInputStream b = stock.open(p)) {
        for (int i = 0; i < 50; i++) {
          long at = Math.floorMod(r.nextLong(), data.length - 4096);
          byte[] x = new byte[4096];
          byte[] y = new byte[4096];
          a.readFully(at, x);
          b.readFully(at, y);
          assertArrayEquals(y, x, "pread at " + at);
          assertArrayEquals(Arrays.copyOfRange(data, (int) at, (int) at + 4096), x);
        }
      }
      Path q = new Path("/diff/by-stock");
      try (FSDataOutputStream out = stock.create(q)) {
        out.write(data);
      }
      assertArrayEquals(data, all(hpc, q), "a stock-written file over the transport");
    }
    TransferMetrics client = TransferMetrics.client();
    assertEquals(0, client.fallbacks() - fallbacksBefore, client.toString());
    assertTrue(client.connections(TransferMetrics.Role.CLIENT) > streamsBefore,
        client.toString());
    // What a MapReduce task would report as HDFS-TRANSPORT_BYTES_READ/_WRITTEN: the file was
    // written over the transport once (the stock writer's copy is not counted) and read over it
    // at least twice whole.
    long[] counted = jobCounters();
    assertTrue(counted[1] - countedBefore[1] >= data.length,
        "bytes written over the transport " + (counted[1] - countedBefore[1]));
    assertTrue(counted[0] - countedBefore[0] >= 2L * data.length,
        "bytes read over the transport " + (counted[0] - countedBefore[0]));
  }

  /** Bytes read and written of the process's statistics of scheme hdfs-transport. */
  @SuppressWarnings("deprecation") // the list MapReduce's tasks read
  private static long[] jobCounters() {
    long[] rw = new long[2];
    for (FileSystem.Statistics s : FileSystem.getAllStatistics()) {
      if (s.getScheme().equals(TransferJobCounters.SCHEME)) {
        rw[0] += s.getBytesRead();
        rw[1] += s.getBytesWritten();
      }
    }
    return rw;
  }

  private static byte[] head(FileSystem fs, Path p, int n) throws IOException {
    byte[] b = new byte[n];
    try (FSDataInputStream in = fs.open(p)) {
      in.readFully(0, b);
    }
    return b;
  }

  private static byte[] all(FileSystem fs, Path p) throws IOException {
    try (FSDataInputStream in = fs.open(p)) {
      return in.readAllBytes();
    }
  }

  @Test
  void filesGoOverTheTransportWithTheirMirrors() throws Exception {
    {
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
      // one host: the client and every DataNode reach each other by the tcp transport's
      // same-host Unix sockets (hadoop.hpc.transport.tcp.local.dir)
      assertTrue(client.localConnections() > 0, "client streams by local sockets\n" + all);
      for (DataNode dn : cluster.getDataNodes()) {
        assertTrue(TransferCluster.metrics(dn).localConnections() > 0,
            "streams a DataNode accepted or mirrored by local sockets\n" + all);
      }
      beansSayTheSame(cluster, 3 * total);
    }
  }

  /**
   * Short-circuit local reads win over the transport for local blocks: a client with them on
   * (the legacy local reader, which needs no libhadoop.so; the domain-socket reader is chosen at
   * the same place, before any DataTransfer peer) reads every byte of a local file from the
   * block files, and the DataNodes send nothing over the transport for it. The file itself was
   * written over the transport.
   */
  @Test
  void localBlocksAreReadShortCircuitNotOverTheTransport() throws Exception {
    Configuration scr = new Configuration(conf);
    scr.setBoolean("dfs.client.read.shortcircuit", true);
    scr.setBoolean("dfs.client.use.legacy.blockreader.local", true);
    scr.set("dfs.client.context", "short-circuit");
    byte[] data = new byte[2 * TransferCluster.BLOCK + 4321];
    new Random(7).nextBytes(data);
    Path p = new Path("/smoke/short-circuit");
    try (FileSystem fs = FileSystem.newInstance(cluster.getURI(), scr)) {
      long inBefore = serverBytesIn(cluster);
      try (FSDataOutputStream out = fs.create(p)) {
        out.write(data);
      }
      assertTrue(serverBytesIn(cluster) - inBefore >= 3L * data.length,
          "the write went over the transport: " + (serverBytesIn(cluster) - inBefore));
      long outBefore = serverBytesOut(cluster);
      byte[] back = new byte[data.length];
      long shortCircuit;
      try (FSDataInputStream in = fs.open(p)) {
        in.readFully(back);
        shortCircuit = ((HdfsDataInputStream) in).getReadStatistics()
            .getTotalShortCircuitBytesRead();
      }
      assertArrayEquals(data, back, "content read short-circuit");
      assertEquals(data.length, shortCircuit, "bytes read short-circuit");
      assertEquals(0, serverBytesOut(cluster) - outBefore,
          "stream bytes the DataNodes sent over the transport for a local read");
    }
  }

  /**
   * What a user sees in JMX (/jmx of the DataNode's web server reads the same MBeans): each
   * DataNode's HpcDataTransfer-&lt;port&gt; bean and the process's client bean name the tcp
   * transport and count the streams and bytes. A bean shows a snapshot up to one metrics
   * period old (1 s in the test resources), so each DataNode's bean is awaited until it shows
   * at least what that DataNode had counted when this began (the cluster is shared with the
   * other tests, so totals alone can be reached by older snapshots: a bean still at 0 was
   * seen beside two whose earlier streams already made the total).
   */
  private static void beansSayTheSame(MiniDFSCluster cluster, long minBytesIn) throws Exception {
    MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
    List<ObjectName> dns = new ArrayList<>();
    List<long[]> counted = new ArrayList<>();
    for (DataNode dn : cluster.getDataNodes()) {
      dns.add(new ObjectName("Hadoop:service=DataNode,name=HpcDataTransfer-"
          + dn.getXferAddress().getPort()));
      TransferMetrics m = TransferCluster.metrics(dn);
      counted.add(new long[] {m.bytesIn(), m.connections(TransferMetrics.Role.MIRROR)});
    }
    GenericTestUtils.waitFor(() -> {
      for (int i = 0; i < dns.size(); i++) {
        List<ObjectName> one = List.of(dns.get(i));
        if (sum(jmx, one, "TransportBytesIn") < counted.get(i)[0]
            || sum(jmx, one, "MirrorConnectionsOverTransport") < counted.get(i)[1]) {
          return false;
        }
      }
      return true;
    }, 200, 30_000);
    assertTrue(sum(jmx, dns, "TransportBytesIn") >= minBytesIn);
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
    return serverSum(cluster, TransferMetrics::bytesIn);
  }

  private static long serverBytesOut(MiniDFSCluster cluster) {
    return serverSum(cluster, TransferMetrics::bytesOut);
  }

  /** {@code counter} summed over the cluster's DataNode endpoints. */
  private static long serverSum(MiniDFSCluster cluster, ToLongFunction<TransferMetrics> counter) {
    long n = 0;
    for (DataNode dn : cluster.getDataNodes()) {
      n += counter.applyAsLong(TransferCluster.metrics(dn));
    }
    return n;
  }
}
