/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.mapreduce.shuffle.ShuffleAuth;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ReadRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A live service over tcp against peers that do not follow the protocol: frames announcing more
 * than an unauthenticated peer may send, frames that stop half-way, one-sided operations and
 * reads before any open, ranges that overflow. Each is refused (the connection closed, or the
 * request failed with its code), the service's pool memory returns, and a real reducer is served
 * all along.
 */
class HostilePeerTest {
  private static final int CHUNK = 64 * 1024;
  /** The tcp transport's frame header (TcpFrame): type, version, 0, length, op id, ... */
  private static final int FRAME_HEADER = 40;
  private static final byte REQUEST = 1;
  private static final byte READ_REQUEST = 4;
  private static final int IO_TIMEOUT_S = 2;

  @TempDir
  Path tmp;
  private ShuffleTestNode node;
  private HpcShuffleHandler service;
  private Transport clientTransport;
  private ShuffleFetchClient client;

  @BeforeAll
  static void miniClusterMetrics() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  private static Configuration conf() {
    return conf(IO_TIMEOUT_S);
  }

  private static Configuration conf(int ioTimeoutS) {
    Configuration conf = new Configuration(false);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, "127.0.0.1");
    conf.set(ShuffleConfigKeys.CHUNK_SIZE_KEY, Integer.toString(CHUNK));
    conf.set(TransportConfigKeys.BUFFER_POOL_MAX_KEY, "32m");
    conf.set(TransportConfigKeys.IO_TIMEOUT_KEY, ioTimeoutS + "s");
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    return conf;
  }

  @BeforeEach
  void start() throws Exception {
    node = new ShuffleTestNode(tmp.resolve("nm0").toFile(), 1700000000000L, 7, 1);
    node.addMap(0, new int[] {5 * CHUNK + 17, 1000}, 10);
    node.addMap(1, new int[] {3 * CHUNK, 1}, 11);
    startService(IO_TIMEOUT_S);
    clientTransport = TransportFactory.create(conf());
    client = new ShuffleFetchClient(clientTransport, TransportConf.from(conf()),
        ShuffleConf.from(conf()), JobTokenSecretManager.createSecretKey(node.password));
  }

  /**
   * (Re)starts the service with an i/o timeout of {@code ioTimeoutS}: long where a test shows
   * that a refusal comes from the check itself, not from the timeout (the raw socket gives up
   * after 30 s).
   */
  private void startService(int ioTimeoutS) throws Exception {
    if (service != null) {
      service.stop();
    }
    service = HpcShuffleHandlerTest.startService(node, conf(ioTimeoutS));
    service.initializeApplication(node.initContext());
  }

  @AfterEach
  void stop() throws Exception {
    client.close();
    clientTransport.close();
    service.stop();
  }

  @Test
  void aHugeFrameBeforeAuthenticationIsRefusedWithoutAllocating() throws Exception {
    startService(120);
    try (Socket s = raw()) {
      s.getOutputStream().write(header(REQUEST, 16 << 20));
      s.getOutputStream().write(new byte[4096]);
      assertClosedByService(s);
    }
    assertEquals(0, service.poolBytesInUse());
    fetchStillWorks();
  }

  @Test
  void aOneSidedReadBeforeAuthenticationIsRefused() throws Exception {
    startService(120);
    try (Socket s = raw()) {
      s.getOutputStream().write(header(READ_REQUEST, 0));
      assertClosedByService(s);
    }
    fetchStillWorks();
  }

  @Test
  void stalledFramesAndSilentPeersAreDroppedAndTheirMemoryReturns() throws Exception {
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 16; i++) {
        Socket s = raw();
        stalled.add(s);
        OutputStream out = s.getOutputStream();
        if (i % 2 == 0) {
          out.write(header(REQUEST, 200_000)); // within the unauthenticated bound
          out.write(new byte[1000]); // ... and nothing more
        }
        // odd ones: connect and say nothing
      }
      // the service holds at most the bound per stalled connection, and serves meanwhile
      HpcShuffleHandlerTest.awaitTrue(() -> service.poolBytesInUse() > 0, "frames buffered");
      assertTrue(service.poolBytesInUse() <= 16L * Connection.UNTRUSTED_MAX_MESSAGE_BYTES,
          "in use: " + service.poolBytesInUse());
      fetchStillWorks();
      for (Socket s : stalled) {
        assertClosedByService(s); // within the i/o timeout (2 s here)
      }
      HpcShuffleHandlerTest.awaitTrue(() -> service.poolBytesInUse() == 0, "memory returned");
    } finally {
      for (Socket s : stalled) {
        s.close();
      }
    }
  }

  @Test
  void readsWithoutASessionOrPastThePartitionAreRefused() throws Exception {
    Connection c = clientTransport.connect(new InetSocketAddress("127.0.0.1",
        service.address().getPort())).get(10, TimeUnit.SECONDS);
    try {
      // before any open: the connection is not trusted and reads are malformed
      RemoteFailureException e = assertThrows(RemoteFailureException.class,
          () -> send(c, new ReadRequest(1, 0, 0, 10)));
      assertEquals(ShuffleError.BAD_REQUEST, ShuffleError.of(e.code()), e.getMessage());
    } finally {
      c.close();
    }
    try (FetchSession s = client.open("127.0.0.1:" + service.stockPort(), node.job.toString(), 0, node.attempts)) {
      assertEquals(2, s.partitions().size());
    }
    // ranges that overflow a long, start past their map's partition or end past the session's
    // stream (map 0's partition, then map 1's), on a real session
    Connection trusted = connect();
    try {
      long session = open(trusted);
      for (ReadRequest r : List.of(new ReadRequest(session, 0, Long.MAX_VALUE - 5, 100),
          new ReadRequest(session, 0, 6L * CHUNK, 8),
          new ReadRequest(session, 0, 5L * CHUNK + 10, 3 * CHUNK + 1000),
          new ReadRequest(session, 1, 0, 3 * CHUNK + 1000), new ReadRequest(session, 7, 0, 8))) {
        RemoteFailureException e = assertThrows(RemoteFailureException.class, () -> send(trusted, r));
        assertEquals(ShuffleError.BAD_REQUEST, ShuffleError.of(e.code()), e.getMessage());
      }
      // a session is bound to its connection: another one cannot read it
      Connection other = connect();
      try {
        open(other);
        RemoteFailureException e = assertThrows(RemoteFailureException.class,
            () -> send(other, new ReadRequest(session, 0, 0, 8)));
        assertEquals(ShuffleError.NO_SESSION, ShuffleError.of(e.code()), e.getMessage());
      } finally {
        other.close();
      }
    } finally {
      trusted.close();
    }
    fetchStillWorks();
  }

  private Connection connect() throws Exception {
    return clientTransport.connect(new InetSocketAddress("127.0.0.1",
        service.address().getPort())).get(10, TimeUnit.SECONDS);
  }

  /** A real, authenticated open on {@code c}; its session id. */
  private long open(Connection c) throws Exception {
    String job = node.job.toString();
    javax.crypto.SecretKey key = JobTokenSecretManager.createSecretKey(node.password);
    OpenRequest r = ShuffleAuth.open(service.stockPort(), service.address().getPort(), job, 0,
        CHUNK, node.attempts, key);
    Buffer b = clientTransport.bufferPool().allocate(r.encodedSize());
    r.encode(b.nio());
    b.nio().flip();
    Buffer answer = c.request(b).get(10, TimeUnit.SECONDS);
    try {
      OpenResponse o = OpenResponse.decode(answer.nio());
      assertEquals(service.stockPort(), o.servicePort());
      assertTrue(ShuffleAuth.verifyReply(o, r, key));
      return ShuffleAuth.session(r.nonce(), o.nonce(), key);
    } finally {
      answer.release();
    }
  }

  private void send(Connection c, ReadRequest r) throws Exception {
    Buffer b = clientTransport.bufferPool().allocate(ReadRequest.BYTES);
    r.encode(b.nio());
    b.nio().flip();
    CompletableFuture<Buffer> f = c.request(b);
    try {
      f.get(10, TimeUnit.SECONDS).release();
    } catch (ExecutionException e) {
      throw (Exception) e.getCause();
    }
  }

  private void fetchStillWorks() throws IOException {
    try (FetchSession s = client.open("127.0.0.1:" + service.stockPort(), node.job.toString(), 0, node.attempts);
        InputStream in = s.stream(0)) {
      assertArrayEquals(node.partitions.get(0)[0], in.readAllBytes());
    }
  }

  private Socket raw() throws IOException {
    Socket s = new Socket();
    s.connect(new InetSocketAddress("127.0.0.1", service.address().getPort()), 5000);
    s.setSoTimeout(30_000);
    return s;
  }

  private static byte[] header(byte type, int length) {
    ByteBuffer h = ByteBuffer.allocate(FRAME_HEADER);
    h.put(type).put((byte) 1).putShort((short) 0).putInt(length).putLong(1).putLong(0)
        .putLong(0).putInt(type == READ_REQUEST ? 16 : 0).putInt(0);
    return h.array();
  }

  /** The service closes {@code s}: reading ends (EOF or reset), not by our read timeout. */
  private static void assertClosedByService(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    byte[] buf = new byte[4096];
    try {
      while (in.read(buf) >= 0) {
        // a CLOSE frame may come first
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the service kept the connection open for 30 s", e);
    } catch (IOException e) {
      // reset by the service: closed as well
    }
  }
}
