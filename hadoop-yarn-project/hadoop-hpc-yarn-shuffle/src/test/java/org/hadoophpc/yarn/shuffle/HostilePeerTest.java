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
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.mapreduce.shuffle.ShuffleAuth;
import org.hadoophpc.mapreduce.shuffle.ShuffleServiceException;
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
 * reads before any open, ranges that overflow; and against its bounds: a flood of connections
 * that never prove a job token, opens naming a map twice or too many maps, the sessions and files
 * caps, many reducers opening at once against a cap. Each is refused (the connection closed, or
 * the request failed with its code: BUSY or BAD_REQUEST, what a reducer acts on) and counted, the
 * service's pool memory returns, and a real reducer is served all along.
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
    client = newClient();
  }

  private ShuffleFetchClient newClient() {
    return new ShuffleFetchClient(clientTransport, TransportConf.from(conf()),
        ShuffleConf.from(conf()), JobTokenSecretManager.createSecretKey(node.password));
  }

  /**
   * (Re)starts the service with an i/o timeout of {@code ioTimeoutS}: long where a test shows
   * that a refusal comes from the check itself, not from the timeout (the raw socket gives up
   * after 30 s).
   */
  private void startService(int ioTimeoutS) throws Exception {
    startService(conf(ioTimeoutS));
  }

  /** Restarts the service with a long i/o timeout and {@code key} set to {@code value}. */
  private void startBounded(String key, int value) throws Exception {
    Configuration conf = conf(120);
    conf.setInt(key, value);
    startService(conf);
  }

  /** (Re)starts the service with {@code conf}. */
  private void startService(Configuration conf) throws Exception {
    if (service != null) {
      service.stop();
    }
    service = HpcShuffleHandlerTest.startService(node, conf);
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

  /**
   * A frame larger than an open may be (8 KiB for open.maps.max maps) is refused when its header
   * arrives, before any pooled memory is taken for it.
   */
  @Test
  void aFrameLargerThanAnOpenBeforeAuthenticationIsRefusedAtItsHeader() throws Exception {
    startService(120);
    try (Socket s = raw()) {
      s.getOutputStream().write(header(REQUEST, 200_000));
      s.getOutputStream().write(new byte[1000]);
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
  void stalledFramesAndSilentPeersAreDroppedHoldingNoPooledMemory() throws Exception {
    List<Socket> stalled = new ArrayList<>();
    try {
      for (int i = 0; i < 16; i++) {
        Socket s = raw();
        stalled.add(s);
        OutputStream out = s.getOutputStream();
        if (i % 2 == 0) {
          out.write(header(REQUEST, 8000)); // within the unauthenticated bound
          out.write(new byte[1000]); // ... and nothing more
        }
        // odd ones: connect and say nothing
      }
      // the service waits for them holding no pooled memory, and serves meanwhile
      HpcShuffleHandlerTest.awaitTrue(() -> service.metrics().untrustedConnections() == 16,
          "all accepted");
      assertEquals(0, service.poolBytesInUse());
      fetchStillWorks();
      for (Socket s : stalled) {
        assertClosedByService(s); // within the i/o timeout (2 s here)
      }
      HpcShuffleHandlerTest.awaitTrue(() -> service.metrics().untrustedClosed() == 16,
          "closed before proving a token, counted");
      assertEquals(0, service.poolBytesInUse());
    } finally {
      closeAll(stalled);
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

  /**
   * More idle connections than one event thread serves (8192): today's limits would drop the
   * reducer's connection behind them; the admission stage closes the oldest idle ones instead.
   */
  @Test
  void aFloodOfUnauthenticatedConnectionsDoesNotLockOutAReducer() throws Exception {
    startBounded(ShuffleConfigKeys.SERVER_IO_THREADS_KEY, 1);
    int flood = 8300;
    List<Socket> idle = new ArrayList<>(flood);
    try {
      for (int i = 0; i < flood; i++) {
        idle.add(raw());
      }
      fetchStillWorks();
      ShuffleServiceMetrics m = service.metrics();
      int perAddress = ShuffleConfigKeys.SERVER_UNTRUSTED_PER_ADDRESS_MAX_DEFAULT;
      assertTrue(m.untrustedEvicted() >= flood - perAddress, "evicted " + m.untrustedEvicted());
      assertTrue(m.untrustedConnections() <= perAddress, "waiting " + m.untrustedConnections());
    } finally {
      closeAll(idle);
    }
  }

  @Test
  void anOpenNamingAMapTwiceOrTooManyMapsIsRefused() throws Exception {
    String a0 = node.attempts.get(0);
    ShuffleServiceException twice = assertThrows(ShuffleServiceException.class,
        () -> client.open(host(), node.job.toString(), 0, List.of(a0, node.attempts.get(1), a0)));
    assertEquals(ShuffleError.BAD_REQUEST, twice.code(), twice.getMessage());
    List<String> many = new ArrayList<>();
    for (int i = 0; i <= ShuffleConfigKeys.SERVER_OPEN_MAPS_MAX_DEFAULT; i++) {
      many.add(new TaskAttemptID(node.job.getJtIdentifier(), node.job.getId(), TaskType.MAP, i,
          0).toString());
    }
    ShuffleServiceException tooMany = assertThrows(ShuffleServiceException.class,
        () -> client.open(host(), node.job.toString(), 0, many));
    assertEquals(ShuffleError.BAD_REQUEST, tooMany.code(), tooMany.getMessage());
    assertEquals(2, service.metrics().opensRefusedByMaps());
    assertEquals(0, service.openSessions());
    fetchStillWorks();
  }

  @Test
  void theSessionsCapAnswersBusyAndCounts() throws Exception {
    startBounded(ShuffleConfigKeys.SERVER_SESSIONS_PER_JOB_MAX_KEY, 1);
    try (FetchSession held = client.open(host(), node.job.toString(), 0, node.attempts)) {
      ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
          () -> client.open(host(), node.job.toString(), 1, node.attempts));
      assertEquals(ShuffleError.BUSY, e.code(), e.getMessage());
      assertEquals(1, service.metrics().opensRefusedBySessionCap());
      assertEquals(2, held.partitions().size());
    }
    HpcShuffleHandlerTest.awaitTrue(() -> service.openSessions() == 0, "session closed");
    fetchStillWorks(); // the place came back
  }

  /** Sessions of the same map attempts share its file: the cap counts distinct files. */
  @Test
  void theFilesCapAnswersBusyAndSharedFilesCountOnce() throws Exception {
    startBounded(ShuffleConfigKeys.SERVER_FILES_MAX_KEY, 1);
    String a0 = node.attempts.get(0);
    try (FetchSession first = client.open(host(), node.job.toString(), 0, List.of(a0));
        FetchSession second = client.open(host(), node.job.toString(), 1, List.of(a0))) {
      try (InputStream in = second.stream(0)) {
        assertArrayEquals(node.partitions.get(0)[1], in.readAllBytes());
      }
      ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
          () -> client.open(host(), node.job.toString(), 0, node.attempts));
      assertEquals(ShuffleError.BUSY, e.code(), e.getMessage());
      assertEquals(1, service.metrics().opensRefusedByFileCap());
      try (InputStream in = first.stream(0)) {
        assertArrayEquals(node.partitions.get(0)[0], in.readAllBytes());
      }
    }
    HpcShuffleHandlerTest.awaitTrue(() -> service.openSessions() == 0, "sessions closed");
    try (FetchSession s = client.open(host(), node.job.toString(), 1, List.of(node.attempts
        .get(1))); InputStream in = s.stream(0)) {
      assertArrayEquals(node.partitions.get(1)[1], in.readAllBytes());
    }
  }

  /** Reducers opening at once against a cap of 3: exactly 3 hold sessions, the rest BUSY. */
  @Test
  void concurrentOpensNeverPassTheCap() throws Exception {
    int cap = 3;
    int reducers = 12;
    startBounded(ShuffleConfigKeys.SERVER_SESSIONS_MAX_KEY, cap);
    ExecutorService pool = Executors.newFixedThreadPool(reducers);
    CountDownLatch go = new CountDownLatch(1);
    CompletableFuture<Void> done = new CompletableFuture<>();
    List<Future<ShuffleError>> outcomes = new ArrayList<>();
    List<ShuffleFetchClient> clients = new ArrayList<>();
    try {
      for (int i = 0; i < reducers; i++) {
        int reduce = i % 2;
        ShuffleFetchClient own = newClient(); // a reducer each: a connection each
        clients.add(own);
        outcomes.add(pool.submit(() -> {
          go.await();
          try (FetchSession s = own.open(host(), node.job.toString(), reduce, node.attempts)) {
            done.get(); // hold the session until every open has its answer
            return null;
          } catch (ShuffleServiceException e) {
            return e.code();
          }
        }));
      }
      go.countDown();
      HpcShuffleHandlerTest.awaitTrue(() -> service.metrics().opensRefusedBySessionCap()
          + service.openSessions() == reducers, "every open answered");
      assertEquals(cap, service.openSessions());
      assertEquals(reducers - cap, service.metrics().opensRefusedBySessionCap());
      done.complete(null);
      int busy = 0;
      for (Future<ShuffleError> f : outcomes) {
        ShuffleError e = f.get(60, TimeUnit.SECONDS);
        if (e != null) {
          assertEquals(ShuffleError.BUSY, e);
          busy++;
        }
      }
      assertEquals(reducers - cap, busy);
    } finally {
      done.complete(null);
      pool.shutdownNow();
      for (ShuffleFetchClient c : clients) {
        c.close();
      }
    }
  }

  private String host() {
    return "127.0.0.1:" + service.stockPort();
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

  private static void closeAll(List<Socket> sockets) throws IOException {
    for (Socket s : sockets) {
      s.close();
    }
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
