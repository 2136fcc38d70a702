/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.net.NetUtils;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.nativeio.RdmaPort;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * HDFS files over the verbs transport, strict, on a real RDMA device (Soft-RoCE rxe0 in the VM
 * lane): DataNodes on the device's IPv4 address, endpoint offset 0 (rdma_cm's own port space),
 * clients and mirrors reaching them by that address. Cross-checked with the device's own packet
 * counters ({@code hw_counters/sent_pkts} and {@code rcvd_pkts}: rxe has no
 * {@code counters/port_xmit_data}). Skips without a device unless
 * {@code -Dhadoop.hpc.test.require.verbs=true} (dev-support/bin/test-rdma).
 */
class TransferVerbsTest {
  private static RdmaDevice device;
  private static InetAddress address;

  @BeforeAll
  static void findDevice() {
    String why = null;
    if (!HpcNative.isAvailable()) {
      why = "libhpcnative unavailable: " + HpcNative.unavailabilityCause().getMessage();
    } else {
      RdmaDevices devices = RdmaDevices.probe();
      String wanted = System.getProperty("hadoop.hpc.test.verbs.device", "");
      device = devices.devices().stream()
          .filter(d -> (wanted.isEmpty() || d.name().equals(wanted)) && d.hasActivePort())
          .findFirst().orElse(null);
      if (device == null) {
        why = "no active RDMA device (" + devices.reason().orElse(devices.devices().toString())
            + ")";
      } else {
        address = device.ipv4Address(1).orElse(null);
        if (address == null) {
          why = "device " + device.name() + " has no netdev with an IPv4 address";
        }
      }
    }
    if (why != null) {
      if (Boolean.getBoolean("hadoop.hpc.test.require.verbs")) {
        fail("no RDMA device (hadoop.hpc.test.require.verbs=true): " + why);
      }
      assumeTrue(false, "no RDMA device: run dev-support/bin/test-rdma (" + why + ")");
    }
  }

  @Test
  void filesAndTheirMirrorsGoOverRdma() throws Exception {
    String ip = address.getHostAddress();
    Configuration conf = new HdfsConfiguration();
    File base = new File(System.getProperty("test.build.data",
        System.getProperty("java.io.tmpdir")), "transfer-verbs-" + ProcessHandle.current().pid());
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, base.getAbsolutePath());
    conf.setLong("dfs.blocksize", 1024 * 1024);
    // No WebHDFS: nothing here uses it. (It does not save start-up time: Hadoop 3.5.0's
    // NameNodeHttpServer sets up its Jersey resources whatever this says, ~64 s of the test's
    // ~230 s under the VM lane's TCG in CI, and MiniDFSCluster always starts that server.)
    conf.setBoolean("dfs.webhdfs.enabled", false);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "verbs");
    conf.setBoolean(TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY, true);
    conf.set(TransportConfigKeys.VERBS_DEVICE_KEY, device.name());
    conf.set("dfs.datanode.plugins", RdmaDataTransferPlugin.class.getName());
    conf.set("hadoop.rpc.socket.factory.class.ClientProtocol", RdmaSocketFactory.class.getName());
    conf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
    conf.setInt(TransferConfigKeys.PORT_OFFSET_KEY, 0);
    // connect + HELLO within 15 s, not 3: the default is sized for real CPUs, and the VM lane
    // emulates its CPUs (TCG) many times slower; strict, one late HELLO would fail the write
    conf.set(TransferConfigKeys.CONNECT_TIMEOUT_KEY, "15s");
    // clients and mirrors reach DataNodes by the device's address, not the NameNode's view
    conf.setBoolean("dfs.client.use.datanode.hostname", true);
    conf.setBoolean("dfs.datanode.use.datanode.hostname", true);
    int n = 2;
    Configuration[] overlays = new Configuration[n];
    for (int i = 0; i < n; i++) {
      overlays[i] = new Configuration(false);
      overlays[i].set("dfs.datanode.address", ip + ":" + freePort());
      overlays[i].set("dfs.datanode.http.address", "127.0.0.1:0");
      overlays[i].set("dfs.datanode.ipc.address", "127.0.0.1:0");
    }
    long sentBefore = hwCounter("sent_pkts");
    long rcvdBefore = hwCounter("rcvd_pkts");
    try (MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(n)
        .checkDataNodeAddrConfig(true).hosts(new String[] {ip, ip}) // dfs.datanode.hostname
        .dataNodeConfOverlays(overlays).build()) {
      cluster.waitActive();
      // MiniDFSCluster resolves the given host names to localhost; this address is real
      NetUtils.addStaticResolution(ip, ip);
      FileSystem fs = cluster.getFileSystem();
      long total = 0;
      Random r = new Random(5);
      for (int size : new int[] {0, 4097, 2 * 1024 * 1024 + 5}) {
        byte[] data = new byte[size];
        r.nextBytes(data);
        Path p = new Path("/verbs/" + size);
        try (FSDataOutputStream out = fs.create(p, (short) 2)) {
          out.write(data);
        }
        byte[] back = new byte[size];
        try (FSDataInputStream in = fs.open(p)) {
          in.readFully(0, back);
        }
        assertArrayEquals(data, back, "content of " + p);
        total += size;
      }
      long in = 0;
      long mirrors = 0;
      StringBuilder all = new StringBuilder(TransferMetrics.client().toString());
      for (DataNode dn : cluster.getDataNodes()) {
        TransferMetrics m = TransferMetrics.server(dn.getXferAddress().getPort());
        in += m.bytesIn();
        mirrors += m.connections(TransferMetrics.Role.MIRROR);
        all.append('\n').append(m);
        assertEquals(0, m.fallbacks(), m.toString());
      }
      System.out.println(all);
      assertEquals(0, TransferMetrics.client().fallbacks(), all.toString());
      assertTrue(in >= 2 * total, "DataNodes received " + in + " bytes over verbs for " + total
          + " written with replication 2\n" + all);
      assertTrue(mirrors >= 2, "mirror streams over verbs: " + mirrors + "\n" + all);
      // Every RDMA packet carries at most one path MTU of payload, and the path MTU is at most
      // the port's active MTU: the file bytes written to 2 replicas (client -> DataNode ->
      // mirror) and read once need at least 3 x total / active MTU packets. Client and
      // DataNodes share the device, so each of them is counted as sent and as received.
      int mtu = device.ports().stream().filter(p -> p.number() == 1).findFirst()
          .map(RdmaPort::activeMtu).orElse(0);
      long need = (3 * total + mtu - 1) / mtu;
      long sent = hwCounter("sent_pkts") - sentBefore;
      long rcvd = hwCounter("rcvd_pkts") - rcvdBefore;
      System.out.println(device.name() + " hw_counters: sent_pkts +" + sent + ", rcvd_pkts +"
          + rcvd + " for " + total + " bytes written (x2 replicas) and read; at least " + need
          + " packets of active_mtu " + mtu);
      assertTrue(mtu > 0, "active MTU of " + device);
      assertTrue(sentBefore >= 0 && rcvdBefore >= 0,
          "hw_counters/sent_pkts and rcvd_pkts of " + device.name());
      assertTrue(sent >= need, "the device sent " + sent + " packets for " + (3 * total)
          + " bytes over a " + mtu + "-byte MTU (at least " + need + ")");
      assertTrue(rcvd >= need, "the device received " + rcvd + " packets for " + (3 * total)
          + " bytes over a " + mtu + "-byte MTU (at least " + need + ")");
    }
  }

  /** A hardware counter of port 1 (e.g. {@code sent_pkts}), or -1 when the device has none. */
  private static long hwCounter(String name) {
    File f = new File("/sys/class/infiniband/" + device.name() + "/ports/1/hw_counters/" + name);
    try {
      return Long.parseLong(new String(Files.readAllBytes(f.toPath()), StandardCharsets.US_ASCII)
          .trim());
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, address)) {
      return s.getLocalPort();
    }
  }
}
