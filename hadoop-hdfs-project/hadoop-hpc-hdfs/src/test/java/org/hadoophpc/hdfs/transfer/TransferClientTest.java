/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A client's transfer streams: the privileged-port rule on the client's side (no transport
 * towards a DataNode whose transfer port HDFS trusts instead of a SASL handshake), and the
 * lifetime of the transports of shared clients (closed with their last stream once retired,
 * at most {@link TransferClient#MAX_SHARED} settings kept).
 */
class TransferClientTest {
  private DataNodeEndpoint endpoint;
  private final List<Transport> opened = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    endpoint = new DataNodeEndpoint(tcp(), TransferMetrics.of("client-test-server"));
  }

  @AfterEach
  void tearDown() throws IOException {
    endpoint.close();
    for (Transport t : opened) {
      t.close();
    }
  }

  private static Configuration tcp() {
    Configuration c = new Configuration(false);
    c.set("hadoop.hpc.transport", "tcp");
    c.set(TransferConfigKeys.ENABLED_KEY, "true");
    return c;
  }

  private TransferClient client(Configuration c) throws IOException {
    Transport t = TransportFactory.create(c);
    opened.add(t);
    return new TransferClient(TransferConf.from(c), t, null, TransferMetrics.of("client-test"),
        TransferMetrics.Role.CLIENT);
  }

  private static boolean closed(Transport t) {
    try {
      t.bufferPool().allocate(1).release();
      return false;
    } catch (IllegalStateException e) {
      return true; // the pool closes with its transport
    }
  }

  // ---- the privileged-port rule -------------------------------------------------------------

  private static Configuration secure() {
    Configuration c = tcp();
    c.set("hadoop.security.authentication", "kerberos");
    return c;
  }

  @Test
  void aSecureClientReachesADataNodeOnAPrivilegedPortOverStockTcp() throws IOException {
    TransferClient c = client(secure());
    assertEquals(TransferMetrics.Fallback.PRIVILEGED_PORT,
        c.precheck(new InetSocketAddress("127.0.0.1", 1004), false));
    Configuration protection = secure(); // HDFS skips SASL on that port whatever this says
    protection.set("dfs.data.transfer.protection", "privacy");
    assertEquals(TransferMetrics.Fallback.PRIVILEGED_PORT,
        client(protection).precheck(new InetSocketAddress("127.0.0.1", 1004), false));
    assertNull(c.precheck(new InetSocketAddress("127.0.0.1", 9866), false),
        "an unprivileged port: SASL protects the stream as on TCP");
  }

  @Test
  void thePortIsNotTrustedWithoutSecurityOrWithEncryption() throws IOException {
    Configuration encrypted = secure();
    encrypted.setBoolean("dfs.encrypt.data.transfer", true);
    for (Configuration c : new Configuration[] {tcp(), encrypted}) {
      assertNull(client(c).precheck(new InetSocketAddress("127.0.0.1", 1004), false));
    }
  }

  @Test
  void streamsThatMustUseTheTransportFailNamingTheRule() throws IOException {
    Configuration strict = secure();
    strict.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
    TransferClient c = client(strict);
    long before = c.metrics.fallbacks(TransferMetrics.Fallback.PRIVILEGED_PORT);
    try (Socket s = new RdmaSocketFactory(c).createSocket()) {
      ConnectException e = assertThrows(ConnectException.class,
          () -> s.connect(new InetSocketAddress("127.0.0.1", 1004), 1000));
      assertTrue(e.getMessage().contains("PRIVILEGED_PORT")
          && e.getMessage().contains("skips the SASL handshake"), e.getMessage());
    }
    Configuration lenient = secure();
    TransferClient l = client(lenient);
    try (Socket s = new RdmaSocketFactory(l).createSocket()) {
      // falls back to stock TCP: port 1004 has no listener here, so the TCP connect fails
      assertThrows(IOException.class,
          () -> s.connect(new InetSocketAddress("127.0.0.1", 1004), 1000));
    }
    assertEquals(before + 1, l.metrics.fallbacks(TransferMetrics.Fallback.PRIVILEGED_PORT),
        "counted like the other fallbacks");
  }

  // ---- transports close with their last user ------------------------------------------------

  @Test
  void aRetiredClientClosesItsTransportWithItsLastStream() throws IOException {
    TransferClient c = client(tcp());
    ClientPipe stream = c.open(endpoint.address(), 3000);
    endpoint.peers.accept();
    c.retire();
    assertFalse(closed(c.transport()), "a stream still uses it");
    assertTrue(c.retired());
    stream.close();
    assertTrue(closed(c.transport()), "closed with its last stream");
    assertFalse(c.acquire(), "no stream starts on a closed transport");
  }

  @Test
  void aRetiredClientWithoutStreamsClosesItsTransportAtOnce() throws IOException {
    TransferClient c = client(tcp());
    c.open(endpoint.address(), 3000).close();
    endpoint.peers.accept();
    assertFalse(closed(c.transport()), "kept while the client is in use");
    c.retire();
    assertTrue(closed(c.transport()));
  }

  @Test
  void sharedClientsAreBoundedAndTheOldestIsClosed() {
    List<TransferClient> shared = new ArrayList<>();
    for (int i = 0; i <= TransferClient.MAX_SHARED; i++) {
      Configuration c = tcp();
      c.set(TransferConfigKeys.NEGATIVE_CACHE_KEY, (1000 + i) + "ms"); // distinct settings
      c.set("hadoop.hpc.transport.io.threads", "1");
      shared.add(TransferClient.shared(c));
    }
    assertTrue(TransferClient.sharedCount() <= TransferClient.MAX_SHARED,
        TransferClient.sharedCount() + " shared clients kept");
    assertTrue(closed(shared.get(0).transport()), "the least recently used one is closed");
    assertTrue(shared.get(0).retired());
    for (TransferClient c : shared.subList(1, shared.size())) {
      assertFalse(closed(c.transport()));
    }
    Configuration again = tcp();
    again.set(TransferConfigKeys.NEGATIVE_CACHE_KEY, "1000ms");
    again.set("hadoop.hpc.transport.io.threads", "1");
    TransferClient reopened = TransferClient.shared(again);
    assertFalse(closed(reopened.transport()), "its settings asked for again: a new transport");
    for (TransferClient c : shared) {
      c.retire();
    }
    reopened.retire();
  }
}
