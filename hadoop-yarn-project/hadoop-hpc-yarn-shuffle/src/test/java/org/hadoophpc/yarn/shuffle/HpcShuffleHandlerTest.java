/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.test.GenericTestUtils;
import org.apache.hadoop.test.GenericTestUtils.LogCapturer;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ServiceUnreachableException;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.mapreduce.shuffle.ShuffleServiceException;
import org.hadoophpc.mapreduce.shuffle.ShuffleAuth;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
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
 * {@link HpcShuffleHandler}'s hpc side against real map-output files and a real transport (tcp here; the
 * verbs subclass runs the same tests on an RDMA device in the Soft-RoCE lane): every byte of every
 * partition arrives, and requests without the job's token, for unknown jobs, or for files that
 * are not map outputs of the job are refused and logged.
 */
class HpcShuffleHandlerTest {
  private static final int CHUNK = 64 * 1024;

  @TempDir
  Path tmp;
  private ShuffleTestNode node;
  private HpcShuffleHandler service;
  private Transport clientTransport;
  private ShuffleFetchClient client;
  /** The hpc port the service listens on and the client is configured with. */
  private int port;

  @BeforeAll
  static void miniClusterMetrics() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  /** The transport the test runs on; the verbs subclass overrides. */
  protected void configureTransport(Configuration conf) {
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
  }

  /** The transport the service answers on in this test. */
  protected String servedOver() {
    return "tcp";
  }

  /**
   * True when the service answers reads straight from the files (tcp with
   * {@code mapreduce.hpc.shuffle.sendfile}, the default); then nothing is read ahead.
   */
  protected boolean sendsFromFiles() {
    return true;
  }

  /** The address the service binds and clients reach. */
  protected String host() {
    return "127.0.0.1";
  }

  protected Configuration conf(int port, int range) {
    Configuration conf = new Configuration(false);
    configureTransport(conf);
    conf.setInt(ShuffleConfigKeys.PORT_KEY, port);
    conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, range);
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, host());
    conf.set(ShuffleConfigKeys.CHUNK_SIZE_KEY, Integer.toString(CHUNK));
    conf.set(TransportConfigKeys.BUFFER_POOL_MAX_KEY, "32m");
    conf.set(TransportConfigKeys.IO_TIMEOUT_KEY, "20s");
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0); // stock's HTTP side: any port
    return conf;
  }

  @BeforeEach
  void start() throws Exception {
    node = new ShuffleTestNode(tmp.resolve("nm0").toFile(), 1700000000000L, 7, 1);
    // partitions: empty, smaller than a chunk, exactly a chunk, many chunks, not chunk-aligned
    node.addMap(0, new int[] {0, 1000, CHUNK, 5 * CHUNK + 17}, 10);
    node.addMap(1, new int[] {3, 0, 2 * CHUNK, 1}, 11);
    node.addMap(2, new int[] {CHUNK - 1, CHUNK + 1, 0, 77}, 12);
    port = freePortRange(1);
    service = startService(node, conf(port, 1));
    service.initializeApplication(node.initContext());
    Configuration cc = conf(port, 1);
    clientTransport = TransportFactory.create(cc);
    client = newClient(cc, JobTokenSecretManager.createSecretKey(node.password));
  }

  private ShuffleFetchClient newClient(Configuration cc, SecretKey key) {
    return new ShuffleFetchClient(clientTransport, TransportConf.from(cc), ShuffleConf.from(cc),
        key);
  }

  static HpcShuffleHandler startService(ShuffleTestNode node, Configuration conf) {
    HpcShuffleHandler s = new HpcShuffleHandler();
    s.setAuxiliaryLocalPathHandler(node.localPaths());
    s.init(conf);
    s.start();
    return s;
  }

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (clientTransport != null) {
      clientTransport.close();
      assertEquals(0, clientTransport.bufferPool().outstandingBuffers(),
          "client transport buffers leaked");
    }
    if (service != null) {
      service.stop();
    }
  }

  @Test
  void everyPartitionArrivesByteForByte() throws Exception {
    for (int reduce = 0; reduce < 4; reduce++) {
      try (FetchSession s = client.open(host(), node.job.toString(), reduce, node.attempts)) {
        for (int m = 0; m < node.attempts.size(); m++) {
          OpenResponse.Partition p = s.partitions().get(m);
          byte[] want = node.partitions.get(m)[reduce];
          assertEquals(OpenResponse.Status.OK, p.status(), p.message());
          assertEquals(want.length, p.partLength());
          assertEquals(want.length + 7L, p.rawLength());
          try (InputStream in = s.stream(m)) {
            assertArrayEquals(want, in.readAllBytes(), "map " + m + " reduce " + reduce);
          }
        }
      }
    }
    ShuffleServiceMetrics m = service.metrics();
    long total = node.partitions.stream().flatMap(java.util.Arrays::stream)
        .mapToLong(b -> b.length).sum();
    assertEquals(total, m.bytesServed());
    assertEquals(total, "verbs".equals(servedOver()) ? m.bytesServedOverVerbs()
        : m.bytesServedOverTcp(), "bytes served over " + servedOver());
    assertEquals(total, m.bytesServedOverVerbs() + m.bytesServedOverTcp());
    assertEquals(4, m.sessionsOpened());
    if (sendsFromFiles()) {
      assertEquals(0, m.prefetchHits(), "nothing is read ahead when chunks go by sendfile");
    } else {
      assertTrue(m.prefetchHits() > 0, "first chunks are served from the pre-fetch");
    }
    assertEquals(0, m.authFailures());
    awaitTrue(() -> service.openSessions() == 0, "sessions closed by the client");
    awaitTrue(() -> m.prefetchBytes() == 0, "pre-fetch budget returned");
  }

  /**
   * Reads run on from one partition into the next: reduce 3's partitions of
   * 5 chunks + 17, 1 and 77 bytes are six reads of at most a chunk, not eight; reduce 1's 1000,
   * 0 and CHUNK + 1 bytes are two, not three. Every byte still lands in its own map's stream.
   */
  @Test
  void readsRunAcrossPartitions() throws Exception {
    ShuffleServiceMetrics m = service.metrics();
    // why a read-ahead did not happen or was not used (DEBUG lines of the service), for the
    // failure message below
    GenericTestUtils.setLogLevel(org.slf4j.LoggerFactory.getLogger(MapOutputServer.class),
        org.slf4j.event.Level.DEBUG);
    LogCapturer server = LogCapturer.captureLogs(
        org.slf4j.LoggerFactory.getLogger(MapOutputServer.class));
    int[][] cases = {{3, 6}, {1, 2}};
    List<Long> hits = new ArrayList<>();
    for (int[] c : cases) {
      int reduce = c[0];
      long before = m.readRequests();
      long hitsBefore = m.prefetchHits();
      try (FetchSession s = client.open(host(), node.job.toString(), reduce, node.attempts)) {
        for (int i = 0; i < node.attempts.size(); i++) {
          try (InputStream in = s.stream(i)) {
            assertArrayEquals(node.partitions.get(i)[reduce], in.readAllBytes(),
                "map " + i + " reduce " + reduce);
          }
        }
        assertEquals(node.partitions.stream().mapToLong(p -> p[reduce].length).sum(),
            s.bytesReceived());
      }
      assertEquals(c[1], m.readRequests() - before, "reads for reduce " + reduce);
      hits.add(m.prefetchHits() - hitsBefore);
    }
    server.stopCapturing();
    if (!sendsFromFiles()) {
      // each session's first read is read ahead at the open
      assertTrue(hits.stream().allMatch(h -> h >= 1), "hits per session (reduce 3, 1): " + hits
          + "; busy " + m.busyRejections() + ", errors " + m.errors() + "; the service said: "
          + server.getOutput());
    }
  }

  /**
   * A map output that cannot be read after the open checked it, inside a read that runs on into
   * it from another map's partition: where the service copies, the answer ends where that
   * partition starts, the maps before it arrive whole and only its own read fails. Where it
   * sends from files the answer cannot be framed any more: the connection breaks and the map
   * being read fails (its fetch goes back to the scheduler, as any broken stream's).
   */
  @Test
  void aPartitionThatCannotBeReadFailsItsOwnMap() throws Exception {
    try (FetchSession s = client.open(host(), node.job.toString(), 3, node.attempts)) {
      // map 2's output loses its reduce-3 partition (from byte 2 * CHUNK) after the open
      try (java.io.RandomAccessFile f = new java.io.RandomAccessFile(
          node.dataFile(node.attempts.get(2)), "rw")) {
        f.setLength(2L * CHUNK + 5);
      }
      InputStream in0 = s.stream(0);
      if (sendsFromFiles()) {
        assertThrows(java.io.IOException.class, in0::readAllBytes);
        return;
      }
      assertArrayEquals(node.partitions.get(0)[3], in0.readAllBytes());
      assertArrayEquals(node.partitions.get(1)[3], s.stream(1).readAllBytes());
      InputStream in2 = s.stream(2);
      assertThrows(java.io.IOException.class, in2::readAllBytes);
    }
  }

  @Test
  void readsOutOfOrderAndInterleavedAcrossMaps() throws Exception {
    try (FetchSession s = client.open(host(), node.job.toString(), 3, node.attempts)) {
      InputStream a = s.stream(0);
      InputStream b = s.stream(1);
      byte[] first = a.readNBytes(100);
      byte[] all = b.readAllBytes();
      byte[] rest = a.readAllBytes();
      byte[] want = node.partitions.get(0)[3];
      assertArrayEquals(java.util.Arrays.copyOf(want, 100), first);
      assertArrayEquals(java.util.Arrays.copyOfRange(want, 100, want.length), rest);
      assertArrayEquals(node.partitions.get(1)[3], all);
      a.close();
      b.close();
    }
  }

  @Test
  void theServiceHasItsOwnEventThreadCount() throws Exception {
    assertEquals(ShuffleConfigKeys.SERVER_IO_THREADS_DEFAULT, service.ioThreads());
    Configuration c = conf(0, 1);
    c.setInt(ShuffleConfigKeys.SERVER_IO_THREADS_KEY, 0); // 0: the transport's own key
    c.setInt(TransportConfigKeys.IO_THREADS_KEY, 2);
    HpcShuffleHandler other = startService(node, c);
    try {
      assertEquals(2, other.ioThreads());
    } finally {
      other.stop();
    }
  }

  @Test
  void wrongJobTokenIsRejectedAndLogged() throws Exception {
    LogCapturer logs = LogCapturer.captureLogs(
        org.slf4j.LoggerFactory.getLogger(MapOutputServer.class));
    try (ShuffleFetchClient intruder = newClient(conf(service.address().getPort(), 1),
        JobTokenSecretManager.createSecretKey("not the token".getBytes()))) {
      ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
          () -> intruder.open(host(), node.job.toString(), 0, node.attempts));
      assertEquals(ShuffleError.AUTH, e.code(), e.getMessage());
    } finally {
      logs.stopCapturing();
    }
    assertEquals(1, service.metrics().authFailures());
    assertEquals(0, service.metrics().bytesServed());
    assertTrue(logs.getOutput().contains("wrong job token HMAC"), logs.getOutput());
  }

  @Test
  void missingJobTokenIsRejectedAndLogged() throws Exception {
    LogCapturer logs = LogCapturer.captureLogs(
        org.slf4j.LoggerFactory.getLogger(MapOutputServer.class));
    try {
      OpenRequest unsigned = new OpenRequest(0, service.address().getPort(),
          node.job.toString(), 0, CHUNK, node.attempts, ShuffleAuth.nonce(), "");
      RemoteFailureException e = assertThrows(RemoteFailureException.class, () -> sendRaw(unsigned));
      assertEquals(ShuffleError.AUTH, ShuffleError.of(e.code()), e.getMessage());
    } finally {
      logs.stopCapturing();
    }
    assertEquals(1, service.metrics().authFailures());
    assertTrue(logs.getOutput().contains("missing job token HMAC"), logs.getOutput());
  }

  @Test
  void unknownJobIsRefusedWithTheKeyToFix() throws Exception {
    service.stopApplication(new ApplicationTerminationContext(node.app));
    ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
        () -> client.open(host(), node.job.toString(), 0, node.attempts));
    assertEquals(ShuffleError.UNKNOWN_JOB, e.code());
    assertEquals(1, service.metrics().unknownJobs());
    assertEquals(0, service.jobCount());
  }

  @Test
  void stoppingTheApplicationEndsItsSessions() throws Exception {
    FetchSession s = client.open(host(), node.job.toString(), 2, node.attempts);
    assertEquals(1, service.openSessions());
    service.stopApplication(new ApplicationTerminationContext(node.app));
    assertEquals(0, service.openSessions());
    IOException e = assertThrows(IOException.class, () -> s.stream(0).readAllBytes());
    assertTrue(e.getMessage().contains("NO_SESSION"), e.getMessage());
    awaitTrue(() -> service.metrics().prefetchBytes() == 0, "pre-fetch budget returned");
  }

  /**
   * A NodeManager restarted with recovery: stock's handler re-reads the job's token from its
   * state store and YARN does not initialize the application again; the hpc side serves the job
   * all the same (until the application stops), instead of refusing it as unknown.
   */
  @Test
  void aJobRecoveredByARestartedNodeManagerIsServed() throws Exception {
    service.close(); // frees the port for the NodeManager's two lives below
    // the NodeManager's recovery dir for this service (it creates the dir, the service its db)
    org.apache.hadoop.fs.Path state = new org.apache.hadoop.fs.Path(
        java.nio.file.Files.createDirectories(tmp.resolve("nm-state")).toString());
    HpcShuffleHandler before = new HpcShuffleHandler();
    before.setRecoveryPath(state);
    before.setAuxiliaryLocalPathHandler(node.localPaths());
    before.init(conf(port, 1));
    before.start();
    before.initializeApplication(node.initContext());
    before.close(); // the NodeManager goes down with the job still running

    service = new HpcShuffleHandler();
    service.setRecoveryPath(state);
    service.setAuxiliaryLocalPathHandler(node.localPaths());
    service.init(conf(port, 1));
    service.start(); // no initializeApplication: the job comes back from the state store
    try (FetchSession s = client.open(host(), node.job.toString(), 1, node.attempts);
        InputStream in = s.stream(0)) {
      assertArrayEquals(node.partitions.get(0)[1], in.readAllBytes());
    }
    service.stopApplication(new ApplicationTerminationContext(node.app));
    ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
        () -> client.open(host(), node.job.toString(), 1, node.attempts));
    assertEquals(ShuffleError.UNKNOWN_JOB, e.code(), e.getMessage());
  }

  @Test
  void attemptsOfOtherJobsAndPathTricksAreBadRequests() throws Exception {
    for (String bad : List.of("attempt_1700000000000_0008_m_000000_0",
        "attempt_1700000000000_0007_r_000000_0", "../../../../etc/passwd", "",
        // accepted by TaskAttemptID.forName, but not as Hadoop writes ids: never a path
        "attempt_1700000000000_0007_m/../../../x_000000_0",
        "attempt_1700000000000_7_m_0_0", "attempt_1700000000000_0007_m_000000_00")) {
      List<String> maps = new ArrayList<>(node.attempts);
      maps.add(bad);
      ShuffleServiceException e = assertThrows(ShuffleServiceException.class,
          () -> client.open(host(), node.job.toString(), 0, maps), bad);
      assertEquals(ShuffleError.BAD_REQUEST, e.code(), e.getMessage());
    }
    assertEquals(0, service.openSessions());
  }

  @Test
  void missingAndTruncatedOutputsAreReportedPerMap() throws Exception {
    String lost = "attempt_1700000000000_0007_m_000009_0";
    try (RandomAccessFile f = new RandomAccessFile(node.dataFile(node.attempts.get(1)), "rw")) {
      f.setLength(f.length() - 1); // the last partition loses its last byte
    }
    List<String> maps = List.of(node.attempts.get(0), lost, node.attempts.get(1));
    try (FetchSession s = client.open(host(), node.job.toString(), 3, maps)) {
      assertEquals(OpenResponse.Status.OK, s.partitions().get(0).status());
      assertEquals(OpenResponse.Status.NOT_FOUND, s.partitions().get(1).status());
      OpenResponse.Partition cut = s.partitions().get(2);
      assertEquals(OpenResponse.Status.ERROR, cut.status());
      assertTrue(cut.message().contains("truncated"), cut.message());
      assertArrayEquals(node.partitions.get(0)[3], s.stream(0).readAllBytes());
    }
    assertEquals(1, service.metrics().outputsNotFound());
  }

  @Test
  void severalNodeManagersOnOneHostWithTheDefaultPorts() throws Exception {
    ShuffleTestNode other = new ShuffleTestNode(tmp.resolve("nm1").toFile(), 1700000000000L, 7,
        1);
    other.addMap(5, new int[] {10, 20, 30, 40}, 99);
    HpcShuffleHandler first = startService(node, defaultPorts());
    HpcShuffleHandler second = startService(other, defaultPorts());
    try {
      for (HpcShuffleHandler s : List.of(first, second)) {
        assertNull(s.notStartedReason());
        assertTrue(s.address().getPort() > s.stockPort(), s.address() + " " + s.stockPort());
      }
      first.initializeApplication(node.initContext());
      second.initializeApplication(other.initContext());
      // both hold a token of the same job: only the stock port tells them apart
      Configuration cc = defaultPorts();
      try (ShuffleFetchClient c = newClient(cc,
          JobTokenSecretManager.createSecretKey(node.password))) {
        try (FetchSession s = c.open(host() + ":" + second.stockPort(), other.job.toString(), 2,
            other.attempts)) {
          assertEquals(second.address().getPort(), s.port());
          assertArrayEquals(other.partitions.get(0)[2], s.stream(0).readAllBytes());
        }
        try (FetchSession s = c.open(host() + ":" + first.stockPort(), node.job.toString(), 3,
            node.attempts)) {
          assertEquals(first.address().getPort(), s.port());
          assertArrayEquals(node.partitions.get(0)[3], s.stream(0).readAllBytes());
        }
        // a NodeManager that runs no hpc listener is unreachable, never answered by another
        ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
            () -> c.open(host() + ":" + freePortRange(1), node.job.toString(), 0,
                node.attempts));
        assertTrue(e.getMessage().contains("no hpc shuffle service of the NodeManager"),
            e.getMessage());
      }
    } finally {
      first.stop();
      second.stop();
    }
  }

  /** The shipped port settings (the service port follows the stock one), stock on any port. */
  private Configuration defaultPorts() {
    Configuration c = conf(0, 1);
    c.unset(ShuffleConfigKeys.PORT_KEY);
    c.unset(ShuffleConfigKeys.PORT_RANGE_KEY);
    return c;
  }

  @Test
  void aServiceOfAnotherNodeManagerIsRefusedBeforeAnythingElse() throws Exception {
    int wrong = service.stockPort() + 1;
    OpenRequest r = new OpenRequest(wrong, service.address().getPort(), node.job.toString(), 0,
        CHUNK, node.attempts, ShuffleAuth.nonce(), "");
    RemoteFailureException e = assertThrows(RemoteFailureException.class, () -> sendRaw(r));
    assertEquals(ShuffleError.WRONG_SERVICE, ShuffleError.of(e.code()), e.getMessage());
    assertEquals(1, service.metrics().wrongService());
    assertEquals(0, service.metrics().authFailures());
  }

  @Test
  void noServiceIsUnreachableNotAnError() throws Exception {
    int port = freePortRange(1);
    Configuration cc = conf(port, 1);
    try (ShuffleFetchClient c = newClient(cc, JobTokenSecretManager.createSecretKey(
        node.password))) {
      ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
          () -> c.open(host(), node.job.toString(), 0, node.attempts));
      assertTrue(e.getMessage().contains("port " + port), e.getMessage());
    }
  }

  @Test
  void aTakenPortLeavesTheStockShuffleServingAndNamesTheKey() throws Exception {
    Configuration c = conf(service.address().getPort(), 1);
    HpcShuffleHandler clash = new HpcShuffleHandler();
    clash.setAuxiliaryLocalPathHandler(node.localPaths());
    clash.init(c);
    clash.start(); // the NodeManager must not die for our listener
    try {
      assertNull(clash.address());
      assertTrue(clash.notStartedReason().contains(ShuffleConfigKeys.PORT_KEY),
          clash.notStartedReason());
      assertEquals(0, clash.metrics().listening());
      assertEquals(1, clash.metrics().listenerFailures());
      assertStockServes(clash);
    } finally {
      clash.stop();
    }
  }

  @Test
  void badConfigurationLeavesTheStockShuffleServingAndNamesTheKey() throws Exception {
    Configuration c = conf(0, 1);
    c.set(ShuffleConfigKeys.CHUNK_SIZE_KEY, "12");
    HpcShuffleHandler s = new HpcShuffleHandler();
    s.setAuxiliaryLocalPathHandler(node.localPaths());
    s.init(c);
    s.start();
    try {
      assertTrue(s.notStartedReason().contains(ShuffleConfigKeys.CHUNK_SIZE_KEY),
          s.notStartedReason());
      assertStockServes(s);
    } finally {
      s.stop();
    }
  }

  /** The stock HTTP half of {@code s} accepts connections. */
  private static void assertStockServes(HpcShuffleHandler s) throws IOException {
    assertTrue(s.stockPort() > 0);
    try (java.net.Socket sock = new java.net.Socket()) {
      sock.connect(new InetSocketAddress("127.0.0.1", s.stockPort()), 5000);
    }
  }

  private void sendRaw(OpenRequest r) throws Exception {
    Connection c = clientTransport.connect(new InetSocketAddress(host(),
        service.address().getPort())).get(10, TimeUnit.SECONDS);
    try {
      Buffer b = clientTransport.bufferPool().allocate(r.encodedSize());
      r.encode(b.nio());
      b.nio().flip();
      CompletableFuture<Buffer> f = c.request(b);
      try {
        f.get(10, TimeUnit.SECONDS).release();
      } catch (java.util.concurrent.ExecutionException e) {
        throw (Exception) e.getCause();
      }
    } finally {
      c.close();
    }
  }

  /** A port p such that p .. p+n-1 were free a moment ago. */
  static int freePortRange(int n) throws IOException {
    for (int attempt = 0; attempt < 50; attempt++) {
      int p;
      try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
        p = s.getLocalPort();
      }
      if (p + n > 65535) {
        continue;
      }
      boolean free = true;
      for (int i = 1; i < n && free; i++) {
        try (java.net.ServerSocket s = new java.net.ServerSocket(p + i)) {
          free = true;
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return p;
      }
    }
    throw new IOException("no range of " + n + " free ports");
  }

  static void awaitTrue(java.util.function.BooleanSupplier c, String what) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!c.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("not within 20 s: " + what);
      }
      Thread.sleep(20);
    }
  }

}
