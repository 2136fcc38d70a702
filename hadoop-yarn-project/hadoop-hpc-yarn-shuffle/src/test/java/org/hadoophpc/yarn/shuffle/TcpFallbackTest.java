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
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ServiceUnreachableException;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RegisteredMemory;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.hadoophpc.net.TransportMetrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A map host whose service the reducer's transport cannot reach is fetched from over tcp
 * ({@code mapreduce.hpc.shuffle.tcp.fallback}): the client side on tcp here (the transport that
 * fails is a stand-in named verbs whose connects are refused), and in
 * {@link TcpFallbackVerbsTest} against a service on verbs, which then also listens over tcp.
 */
class TcpFallbackTest {
  @TempDir
  Path tmp;
  private ShuffleTestNode node;
  private HpcShuffleHandler service;
  private SecretKey key;

  @BeforeAll
  static void miniClusterMetrics() {
    DefaultMetricsSystem.setMiniClusterMode(true);
  }

  /** The service's transport; the verbs subclass overrides. */
  protected void configureTransport(Configuration conf) {
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
  }

  protected String host() {
    return "127.0.0.1";
  }

  private Configuration conf(int port) {
    Configuration conf = new Configuration(false);
    configureTransport(conf);
    conf.setInt(ShuffleConfigKeys.PORT_KEY, port);
    conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, 1);
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, host());
    conf.set(TransportConfigKeys.BUFFER_POOL_MAX_KEY, "32m");
    conf.set(TransportConfigKeys.IO_TIMEOUT_KEY, "20s");
    conf.setInt(org.apache.hadoop.mapred.ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    return conf;
  }

  /** The reducer's tcp settings: the service's, over tcp. */
  private Configuration tcpConf(Configuration conf) {
    Configuration c = new Configuration(conf);
    c.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    c.setBoolean(TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY, false);
    return c;
  }

  @BeforeEach
  void start() throws Exception {
    node = new ShuffleTestNode(tmp.resolve("nm0").toFile(), 1700000000000L, 9, 1);
    node.addMap(0, new int[] {5000, 0, 200_000}, 31);
    node.addMap(1, new int[] {1, 70_000, 3}, 32);
    service = HpcShuffleHandlerTest.startService(node,
        conf(HpcShuffleHandlerTest.freePortRange(1)));
    service.initializeApplication(node.initContext());
    key = JobTokenSecretManager.createSecretKey(node.password);
  }

  @AfterEach
  void stop() {
    if (service != null) {
      service.stop();
    }
  }

  @Test
  void theServiceListensOverTcpBesideVerbs() {
    assertNotNull(service.address(), service.notStartedReason());
    if ("tcp".equals(service.transportName())) {
      assertNull(service.tcpFallbackAddress(), "over tcp there is nothing to fall back to");
    } else {
      InetSocketAddress tcp = service.tcpFallbackAddress();
      assertNotNull(tcp, "over " + service.transportName() + " the service also listens over tcp");
      assertEquals(service.address().getAddress(), tcp.getAddress());
    }
  }

  @Test
  void aHostTheTransportCannotReachIsFetchedOverTcp() throws Exception {
    Configuration cc = conf(service.address().getPort());
    Configuration tcp = tcpConf(cc);
    List<String> overTcp = new CopyOnWriteArrayList<>();
    try (Transport primary = TransportFactory.create(tcp);
        Transport unreachable = new Unreachable(primary);
        ShuffleFetchClient client = new ShuffleFetchClient(unreachable, TransportConf.from(cc),
            ShuffleConf.from(cc), key).withTcpFallback(() -> open(tcp), overTcp::add)) {
      for (int reduce = 0; reduce < 3; reduce++) {
        try (FetchSession s = client.open(host(), node.job.toString(), reduce, node.attempts)) {
          assertEquals("tcp", s.transportName());
          for (int m = 0; m < node.attempts.size(); m++) {
            try (InputStream in = s.stream(m)) {
              assertArrayEquals(node.partitions.get(m)[reduce], in.readAllBytes(),
                  "map " + m + " reduce " + reduce);
            }
          }
        }
      }
      assertEquals(List.of(host()), overTcp, "one host, told once (its tcp endpoint is kept)");
    }
  }

  @Test
  void withoutTheFallbackTheHostIsUnreachable() throws Exception {
    Configuration cc = conf(service.address().getPort());
    try (Transport primary = TransportFactory.create(tcpConf(cc));
        Transport unreachable = new Unreachable(primary);
        ShuffleFetchClient client = new ShuffleFetchClient(unreachable, TransportConf.from(cc),
            ShuffleConf.from(cc), key)) {
      ServiceUnreachableException e = assertThrows(ServiceUnreachableException.class,
          () -> client.open(host(), node.job.toString(), 0, node.attempts));
      assertTrue(e.getMessage().contains("over verbs"), e.getMessage());
    }
  }

  @Test
  void offTheServiceListensOnItsTransportOnly() throws Exception {
    Configuration c = conf(HpcShuffleHandlerTest.freePortRange(1));
    c.setBoolean(ShuffleConfigKeys.TCP_FALLBACK_KEY, false);
    HpcShuffleHandler off = HpcShuffleHandlerTest.startService(node, c);
    try {
      assertNotNull(off.address(), off.notStartedReason());
      assertNull(off.tcpFallbackAddress());
    } finally {
      off.stop();
    }
  }

  private static Transport open(Configuration c) {
    try {
      return TransportFactory.create(c);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** A transport named verbs whose connects are refused (a host with its RDMA port down). */
  private static final class Unreachable implements Transport {
    private final Transport pool;
    private final TransportMetrics metrics = new TransportMetrics();

    Unreachable(Transport pool) {
      this.pool = pool;
    }

    @Override
    public String name() {
      return "verbs";
    }

    @Override
    public BufferPool bufferPool() {
      return pool.bufferPool();
    }

    @Override
    public RegisteredMemory registeredMemory() {
      return pool.registeredMemory();
    }

    @Override
    public TransportMetrics metrics() {
      return metrics;
    }

    @Override
    public Listener listen(InetSocketAddress address, RequestHandler handler) {
      throw new UnsupportedOperationException();
    }

    @Override
    public CompletableFuture<Connection> connect(InetSocketAddress address) {
      return CompletableFuture.failedFuture(new ConnectException("rdma_cm: " + address
          + " unreachable (RDMA_CM_EVENT_UNREACHABLE)"));
    }

    @Override
    public RemoteRegion expose(Buffer buffer) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void unexpose(RemoteRegion region) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
      // the pool's transport is closed by its owner
    }
  }
}
