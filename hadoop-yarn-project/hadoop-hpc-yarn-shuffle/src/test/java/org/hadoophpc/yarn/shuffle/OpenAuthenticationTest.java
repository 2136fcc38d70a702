/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ServiceAuthenticationException;
import org.hadoophpc.mapreduce.shuffle.ServiceUnreachableException;
import org.hadoophpc.mapreduce.shuffle.ShuffleAuth;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A co-tenant holding a port of the NodeManager's range before its service cannot pass for it:
 * an answer without the job token, an answer recorded from an earlier open and an open relayed
 * to the real service on another port are all rejected by the reducer, which goes on to the
 * next port and fetches from the real service. A reducer of another protocol version is refused
 * with a typed error, not left waiting.
 */
class OpenAuthenticationTest {
  private static final int CHUNK = 64 * 1024;
  /** The stock port the fakes' host is named with (nothing listens there). */
  private static final String FAKE_HOST = "127.0.0.1:13562";

  @TempDir
  Path tmp;
  private ShuffleTestNode node;
  private SecretKey key;
  private Transport clientTransport;
  private HpcShuffleHandler service;
  private FakeShuffleService fake;

  @BeforeAll
  static void miniClusterMetrics() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  private static Configuration conf(int port, int range) {
    Configuration conf = new Configuration(false);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    conf.setInt(ShuffleConfigKeys.PORT_KEY, port);
    conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, range);
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, "127.0.0.1");
    conf.set(ShuffleConfigKeys.CHUNK_SIZE_KEY, Integer.toString(CHUNK));
    conf.set(TransportConfigKeys.BUFFER_POOL_MAX_KEY, "32m");
    conf.set(TransportConfigKeys.IO_TIMEOUT_KEY, "10s");
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    return conf;
  }

  @BeforeEach
  void start() throws Exception {
    node = new ShuffleTestNode(tmp.resolve("nm0").toFile(), 1700000000000L, 7, 1);
    node.addMap(0, new int[] {3 * CHUNK + 5, 1000}, 10);
    node.addMap(1, new int[] {CHUNK, 1}, 11);
    key = JobTokenSecretManager.createSecretKey(node.password);
    clientTransport = TransportFactory.create(conf(0, 1));
  }

  @AfterEach
  void stop() throws Exception {
    if (fake != null) {
      fake.close();
    }
    if (service != null) {
      service.stop();
    }
    clientTransport.close();
  }

  private ShuffleFetchClient client(int port, int range) {
    Configuration c = conf(port, range);
    return new ShuffleFetchClient(clientTransport, TransportConf.from(c), ShuffleConf.from(c),
        key);
  }

  private String job() {
    return node.job.toString();
  }

  /** The answer a service on {@code hpcPort} holding {@code k} gives to {@code r}. */
  private static OpenResponse answer(OpenRequest r, int hpcPort, int claimedPort, SecretKey k) {
    byte[] nonce = ShuffleAuth.nonce();
    List<OpenResponse.Partition> parts = r.maps().stream()
        .map(m -> OpenResponse.Partition.ok(4, 4)).toList();
    return new OpenResponse(r.servicePort(), claimedPort, nonce,
        ShuffleAuth.replyHash(r, r.servicePort(), hpcPort, nonce, k), parts);
  }

  /** The client tried the fake alone and gave up on it because it proved nothing. */
  private static void assertNotTrusted(ServiceUnreachableException e) {
    assertInstanceOf(ServiceAuthenticationException.class, e.getCause(), e.getMessage());
  }

  @Test
  void anAnswerWithoutTheJobTokenIsRejected() throws Exception {
    int port = HpcShuffleHandlerTest.freePortRange(1);
    SecretKey other = JobTokenSecretManager.createSecretKey(
        "not the token".getBytes(StandardCharsets.UTF_8));
    fake = new FakeShuffleService(port, (r, raw, responder) -> answer(r, port, port, other));
    try (ShuffleFetchClient client = client(port, 1)) {
      ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
          () -> client.open(FAKE_HOST, job(), 0, node.attempts));
      assertNotTrusted(e);
    }
    assertEquals(1, fake.opens.get());
  }

  @Test
  void aReplayedAnswerIsRejected() throws Exception {
    int port = HpcShuffleHandlerTest.freePortRange(1);
    // the fake even holds the token for the first open; later ones get that open's answer
    AtomicReference<OpenResponse> recorded = new AtomicReference<>();
    fake = new FakeShuffleService(port, (r, raw, responder) -> {
      recorded.compareAndSet(null, answer(r, port, port, key));
      return recorded.get();
    });
    try (ShuffleFetchClient client = client(port, 1)) {
      try (FetchSession s = client.open(FAKE_HOST, job(), 0, node.attempts)) {
        assertEquals(port, s.port());
      }
      // the very same fetch again: job, reduce, maps and ports are equal, the nonce is not
      ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
          () -> client.open(FAKE_HOST, job(), 0, node.attempts));
      assertNotTrusted(e);
    }
    assertEquals(3, fake.opens.get()); // the first, the replay on the kept connection, a probe
  }

  @Test
  void anAnswerMadeForAnotherPortIsRejected() throws Exception {
    int port = HpcShuffleHandlerTest.freePortRange(1);
    // what the service on the next port would answer an open relayed to it, were it not to
    // check the port itself: once naming its own port, once claiming the one connected to
    for (boolean claim : new boolean[] {false, true}) {
      if (fake != null) {
        fake.close();
      }
      fake = new FakeShuffleService(port,
          (r, raw, responder) -> answer(r, port + 1, claim ? port : port + 1, key));
      try (ShuffleFetchClient client = client(port, 1)) {
        ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
            () -> client.open(FAKE_HOST, job(), 0, node.attempts));
        assertNotTrusted(e);
      }
    }
  }

  @Test
  void anOpenRelayedToTheServiceOnTheNextPortIsRefusedAndTheReducerFindsTheService()
      throws Exception {
    int base = HpcShuffleHandlerTest.freePortRange(2);
    // the co-tenant takes the first port of the range before the NodeManager starts ...
    AtomicReference<Connection> upstream = new AtomicReference<>();
    fake = new FakeShuffleService(base, (r, raw, responder) -> {
      relay(upstream.get(), raw, responder);
      return null;
    });
    // ... so the service binds the next one
    service = HpcShuffleHandlerTest.startService(node, conf(base, 2));
    service.initializeApplication(node.initContext());
    assertEquals(base + 1, service.address().getPort());
    upstream.set(fake.transport().connect(service.address()).get());
    try (ShuffleFetchClient client = client(base, 2);
        FetchSession s = client.open("127.0.0.1:" + service.stockPort(), job(), 0,
            node.attempts);
        InputStream in = s.stream(0)) {
      assertEquals(base + 1, s.port()); // straight to the service, not through the relay
      assertArrayEquals(node.partitions.get(0)[0], in.readAllBytes());
    }
    assertEquals(1, fake.opens.get());
    assertEquals(1, service.metrics().wrongService());
    assertEquals(0, service.metrics().authFailures());
  }

  @Test
  void aReducerOfAnotherProtocolVersionGetsATypedRefusal() throws Exception {
    int port = HpcShuffleHandlerTest.freePortRange(1);
    service = HpcShuffleHandlerTest.startService(node, conf(port, 1));
    service.initializeApplication(node.initContext());
    Connection c = clientTransport.connect(service.address()).get();
    try {
      // what a reducer of the previous release sends first: its header, then its open
      Buffer b = clientTransport.bufferPool().allocate(64);
      b.nio().putInt(Wire.MAGIC).put((byte) (Wire.VERSION - 1)).put(Wire.TYPE_OPEN)
          .put(new byte[58]).flip();
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> c.request(b).get(10, TimeUnit.SECONDS));
      RemoteFailureException f = assertInstanceOf(RemoteFailureException.class, e.getCause());
      assertEquals(ShuffleError.VERSION, ShuffleError.of(f.code()), f.getMessage());
      assertTrue(f.getMessage().contains("different hadoop-hpc releases"), f.getMessage());
    } finally {
      c.close();
    }
  }

  /** Forwards the open's bytes to {@code to} and its answer, or refusal, back. */
  private void relay(Connection to, Buffer raw, org.hadoophpc.net.RequestHandler.Responder back) {
    byte[] bytes = new byte[raw.nio().remaining()];
    raw.nio().duplicate().get(bytes);
    Buffer out = fake.transport().bufferPool().allocate(bytes.length);
    out.nio().put(bytes).flip();
    CompletableFuture<Buffer> f = to.request(out);
    f.whenComplete((answer, failure) -> {
      if (failure != null) {
        Throwable c = failure instanceof java.util.concurrent.CompletionException
            ? failure.getCause() : failure;
        back.fail(c instanceof RemoteFailureException rf ? rf.code() : 0, c.getMessage());
        return;
      }
      byte[] a = new byte[answer.nio().remaining()];
      answer.nio().get(a);
      answer.release();
      Buffer copy = fake.transport().bufferPool().allocate(a.length);
      copy.nio().put(a).flip();
      back.respond(copy);
    });
  }
}
