/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class DaemonCheckTest {

  private static Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    return conf;
  }

  @Test
  void namenodeRpcAddressFallsBackToDefaultFs() {
    Configuration conf = conf();
    conf.set("fs.defaultFS", "hdfs://127.0.0.1:9123");
    Map<String, InetSocketAddress> a = DaemonCheck.bindAddresses(conf, "namenode");
    assertEquals(9123, a.get("dfs.namenode.rpc-address").getPort());
    // port 0 listeners are ephemeral and never clash: not listed
    assertEquals(1, a.size());
  }

  @Test
  void takenPortIsReportedWithDaemonPortAndKey() throws Exception {
    try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      Configuration conf = conf();
      conf.set("dfs.namenode.rpc-address", "127.0.0.1:" + held.getLocalPort());
      List<String> clashes = DaemonCheck.findClashes(conf, "namenode");
      assertEquals(1, clashes.size(), clashes.toString());
      String msg = clashes.get(0);
      assertTrue(msg.startsWith("namenode cannot start"), msg);
      assertTrue(msg.contains("127.0.0.1:" + held.getLocalPort()), msg);
      assertTrue(msg.contains("dfs.namenode.rpc-address"), msg);
    }
  }

  @Test
  void freePortsPass() throws Exception {
    int port;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = probe.getLocalPort();
    }
    Configuration conf = conf();
    conf.set("dfs.namenode.rpc-address", "127.0.0.1:" + port);
    assertEquals(List.of(), DaemonCheck.findClashes(conf, "namenode"));
  }

  @Test
  void bindHostOverridesAddressHost() {
    Configuration conf = new Configuration(false);
    conf.set("yarn.resourcemanager.address", "rm.example.invalid:8032");
    conf.set("yarn.resourcemanager.bind-host", "127.0.0.1");
    InetSocketAddress a = DaemonCheck.bindAddresses(conf, "resourcemanager")
        .get("yarn.resourcemanager.address");
    assertEquals("127.0.0.1", a.getHostString());
  }

  @Test
  void shufflePortOnlyWhenAuxServiceConfigured() {
    Configuration conf = new Configuration(false);
    conf.set("mapreduce.shuffle.port", "13562");
    assertTrue(DaemonCheck.bindAddresses(conf, "nodemanager").isEmpty());
    conf.set("yarn.nodemanager.aux-services", "mapreduce_shuffle");
    assertEquals(13562,
        DaemonCheck.bindAddresses(conf, "nodemanager").get("mapreduce.shuffle.port").getPort());
  }

  @Test
  void hpcShufflePortOnlyWhenHpcShuffleHandlerRunsWithOnePort() {
    Configuration conf = new Configuration(false);
    conf.set("yarn.nodemanager.aux-services", "mapreduce_shuffle");
    conf.set("mapreduce.hpc.shuffle.port", "13563");
    conf.set("mapreduce.hpc.shuffle.port.range", "1");
    assertFalse(DaemonCheck.bindAddresses(conf, "nodemanager")
        .containsKey("mapreduce.hpc.shuffle.port"), "stock handler: no hpc port");
    conf.set("yarn.nodemanager.aux-services.mapreduce_shuffle.class",
        "org.hadoophpc.yarn.shuffle.HpcShuffleHandler");
    assertEquals(13563, DaemonCheck.bindAddresses(conf, "nodemanager")
        .get("mapreduce.hpc.shuffle.port").getPort());
    conf.set("mapreduce.hpc.shuffle.bind-host", "127.0.0.1");
    assertEquals("127.0.0.1", DaemonCheck.bindAddresses(conf, "nodemanager")
        .get("mapreduce.hpc.shuffle.port").getHostString());
    conf.set("mapreduce.hpc.shuffle.port.range", "4");
    assertFalse(DaemonCheck.bindAddresses(conf, "nodemanager")
        .containsKey("mapreduce.hpc.shuffle.port"), "a range takes any free port");
    conf.unset("mapreduce.hpc.shuffle.port.range");
    assertFalse(DaemonCheck.bindAddresses(conf, "nodemanager")
        .containsKey("mapreduce.hpc.shuffle.port"), "so does the default range (8)");
  }

  @Test
  void unknownDaemonIsAnError() {
    assertThrows(IllegalArgumentException.class,
        () -> DaemonCheck.bindAddresses(new Configuration(false), "jobtracker"));
  }
}
