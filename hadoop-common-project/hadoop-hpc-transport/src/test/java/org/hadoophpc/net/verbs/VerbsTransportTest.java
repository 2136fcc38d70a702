/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.hadoophpc.net.TransportConfigKeys.BUFFER_POOL_MAX_KEY;
import static org.hadoophpc.net.TransportConfigKeys.BUFFER_SLAB_SIZE_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_INFLIGHT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_MESSAGE_SIZE_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RegisteredMemory;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConformanceTest;
import org.hadoophpc.net.TransportException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The conformance suite on a real RDMA device, plus what only verbs has (receive rings within
 * the pool's bound): {@code -Dhadoop.hpc.test.verbs.device} (default:
 * the first with an active port), servers bound to the IPv4 address of its netdev. Skips without
 * a device, unless {@code -Dhadoop.hpc.test.require.verbs=true} (the Soft-RoCE lane,
 * dev-support/bin/test-rdma) makes that a failure.
 */
class VerbsTransportTest extends TransportConformanceTest {
  private RdmaDevice device;
  private InetAddress address;

  @BeforeEach
  void findDevice() throws IOException {
    VerbsRig rig = VerbsRig.find(); // skips (fails in the lane) without a device
    device = rig.device;
    address = rig.address;
  }

  @Override
  protected Transport newTransport(Configuration conf) throws Exception {
    assertNotNull(device, "findDevice ran first");
    return VerbsTransport.open(TransportConf.from(conf), device, 1);
  }

  @Override
  protected InetSocketAddress bindAddress() {
    return new InetSocketAddress(address, 0);
  }

  @Override
  protected long ringBytes(Configuration conf) {
    return VerbsTransport.ringBytes(TransportConf.from(conf));
  }

  @Test
  void receiveRingsShrinkThenStopAtAQuarterOfThePoolNamingTheKey() throws Exception {
    // max.inflight=8: a ring of 8 receives is 9 chunks of 8 KiB (72 KiB), of 6 receives 7
    // (56 KiB). A 512 KiB pool leaves 128 KiB to rings: one full ring, one shrunk to fill the
    // quarter, then no more.
    Configuration conf = conf(MAX_INFLIGHT_KEY, "8", BUFFER_POOL_MAX_KEY, "512k",
        BUFFER_SLAB_SIZE_KEY, "64k", MAX_MESSAGE_SIZE_KEY, "64k");
    start(conf, (conn, request, responder) -> responder.respond(request));
    assertEquals(72 << 10, client.registeredMemory().ringBytes());
    Connection second = client.connect(listener.address()).get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertEquals(128 << 10, client.registeredMemory().ringBytes());
    for (int i = 0; i < 20; i++) {
      // More requests than the smaller window: credits keep coming back.
      Buffer request = filled(client.bufferPool(), 5000, i);
      long sum = crc(request.nio());
      Buffer response = second.request(request).get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertEquals(sum, crc(response.nio()), "the connection with the smaller ring works");
      response.release();
    }
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> client.connect(listener.address()).get(WAIT_SECONDS, TimeUnit.SECONDS));
    assertInstanceOf(TransportException.class, e.getCause());
    assertTrue(e.getCause().getMessage().contains(BUFFER_POOL_MAX_KEY), e.getCause().toString());
    RegisteredMemory m = client.registeredMemory();
    assertEquals(128 << 10, m.ringBytes(), "the refused connection holds no ring");
    assertTrue(m.reservedBytes() <= m.maxBytes(), m.toString());
    connection.close();
    waitFor(() -> client.registeredMemory().ringBytes() == 56 << 10
        && server.registeredMemory().ringBytes() == 56 << 10, "the first ring went back");
    Connection third = client.connect(listener.address()).get(WAIT_SECONDS, TimeUnit.SECONDS);
    assertEquals(128 << 10, client.registeredMemory().ringBytes(), "a full ring fits again");
    third.close();
    second.close();
  }

  @Test
  void aPoolWhoseQuarterCannotHoldARingIsAConfigurationErrorNamingTheKey() {
    Configuration conf = new Configuration(false);
    conf.set(BUFFER_POOL_MAX_KEY, "64k");
    conf.set(MAX_MESSAGE_SIZE_KEY, "64k");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> VerbsTransport.open(TransportConf.from(conf), device, 1));
    assertTrue(e.getMessage().contains(BUFFER_POOL_MAX_KEY + "=65536"), e.getMessage());
  }
}
