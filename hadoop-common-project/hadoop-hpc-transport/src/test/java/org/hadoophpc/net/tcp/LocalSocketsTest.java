/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.fs.SharedPlaces;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which peers a tcp connection reaches by a same-host Unix domain socket ({@link LocalSockets}),
 * and that every case it refuses still connects, over TCP.
 */
class LocalSocketsTest {
  private static final InetSocketAddress LOOPBACK = new InetSocketAddress("127.0.0.1", 0);

  @TempDir
  Path tmp;

  private static Configuration conf(String dir) {
    Configuration c = new Configuration(false);
    c.set(TransportConfigKeys.IO_TIMEOUT_KEY, "20s");
    if (dir != null) {
      c.set(TransportConfigKeys.TCP_LOCAL_DIR_KEY, dir);
    }
    return c;
  }

  private static final RequestHandler ECHO = (conn, request, responder) ->
      responder.respond(request);

  /** One request answered over {@code c}: the bytes come back. */
  private static void echo(TcpTransport client, Connection c) throws Exception {
    Buffer b = client.bufferPool().allocate(5);
    b.nio().put(new byte[] {1, 2, 3, 4, 5}).flip();
    Buffer answer = c.request(b).get(30, TimeUnit.SECONDS);
    try {
      assertEquals(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}), answer.nio());
    } finally {
      answer.release();
    }
  }

  @Test
  void aSameHostPeerIsReachedByItsLocalSocketWhichGoesWithTheListener() throws Exception {
    String dir = tmp.resolve("s").toString();
    java.util.Set<InetSocketAddress> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(dir)));
        TcpTransport client = new TcpTransport(TransportConf.from(conf(dir)))) {
      Listener l = server.listen(LOOPBACK, (conn, request, responder) -> {
        seen.add(conn.remoteAddress());
        responder.respond(request);
      });
      Path socket = ((TcpListener) l).localPath();
      assertNotNull(socket);
      assertEquals("rwx------", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(Path.of(dir))), "made for its user alone");
      try (Connection c = client.connect(l.address(), 10_000)) {
        echo(client, c);
      }
      try (Connection c = client.connect(l.address()).get(30, TimeUnit.SECONDS)) {
        echo(client, c);
      }
      assertEquals(2, client.metrics().localConnections());
      assertEquals(2, server.metrics().localConnections());
      assertEquals(java.util.Set.of(new InetSocketAddress("127.0.0.1", 0)), seen,
          "a local peer shows with the address it reached, as from this host over TCP");
      l.close();
      assertFalse(Files.exists(socket), "the socket goes with its listener");
    }
  }

  @Test
  void aDirectoryOthersMayWriteIsNotUsedAndPeersMeetOverTcp() throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("open"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxrwxrwx")));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(dir.toString())));
        TcpTransport client = new TcpTransport(TransportConf.from(conf(dir.toString())))) {
      Listener l = server.listen(LOOPBACK, ECHO);
      assertNull(((TcpListener) l).localPath());
      try (Connection c = client.connect(l.address(), 10_000)) {
        echo(client, c);
      }
      assertEquals(0, client.metrics().localConnections());
      assertEquals(1, client.metrics().connectionsOpened());
    }
  }

  @Test
  void aStaleSocketIsPassedOverForTcp() throws Exception {
    String dir = tmp.resolve("s").toString();
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(""))); // TCP only
        TcpTransport client = new TcpTransport(TransportConf.from(conf(dir)))) {
      Listener l = server.listen(LOOPBACK, ECHO);
      LocalSockets sockets = LocalSockets.of(dir);
      Path stale = sockets.bindPath(l.address()); // as a process that died left it
      try (ServerSocketChannel dead = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        dead.bind(UnixDomainSocketAddress.of(stale));
      }
      assertTrue(Files.exists(stale));
      assertNotNull(sockets.find(l.address()), "found, and refuses when connected to");
      try (Connection c = client.connect(l.address(), 10_000)) {
        echo(client, c);
      }
      try (Connection c = client.connect(l.address()).get(30, TimeUnit.SECONDS)) {
        echo(client, c);
      }
      assertEquals(0, client.metrics().localConnections());
    }
  }

  /** Listens and connects with {@code dir}; the listener must have no local socket, TCP works. */
  private static void refusedAndTcpUsed(Path dir) throws Exception {
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(dir.toString())));
        TcpTransport client = new TcpTransport(TransportConf.from(conf(dir.toString())))) {
      Listener l = server.listen(LOOPBACK, ECHO);
      assertNull(((TcpListener) l).localPath(), "no local socket in " + dir);
      try (Connection c = client.connect(l.address(), 10_000)) {
        echo(client, c);
      }
      assertEquals(0, client.metrics().localConnections());
    }
  }

  /** A shared directory like /tmp: anyone may make names in it, the sticky bit guards them. */
  private Path shared() throws Exception {
    return SharedPlaces.sticky(tmp.resolve("shared"));
  }

  @Test
  void aParentOthersMayWriteIsRefused() throws Exception {
    Path parent = Files.createDirectory(shared().resolve("hadoop-hpc-me"));
    Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwxrwxr-x"));
    refusedAndTcpUsed(parent.resolve("sockets"));
    assertFalse(Files.exists(parent.resolve("sockets")), "nothing made in it");
  }

  @Test
  void aParentOfOursOthersCouldReadIsMadePrivateAndUsed() throws Exception {
    Path parent = Files.createDirectory(shared().resolve("hadoop-hpc-me"));
    Files.setPosixFilePermissions(parent, PosixFilePermissions.fromString("rwxr-xr-x"));
    String dir = parent.resolve("s").toString();
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(dir)))) {
      assertNotNull(((TcpListener) server.listen(LOOPBACK, ECHO)).localPath());
    }
    assertEquals("rwx------", PosixFilePermissions.toString(
        Files.getPosixFilePermissions(parent)), "as an older release left it, now 700");
  }

  @Test
  void aParentOfAnotherUserIsRefused() throws Exception {
    Path parent = Files.createDirectory(shared().resolve("hadoop-hpc-me"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    SharedPlaces.giveToNobody(parent);
    refusedAndTcpUsed(parent.resolve("sockets"));
  }

  @Test
  void aSymlinkedParentIsRefused() throws Exception {
    Path elsewhere = Files.createDirectory(tmp.resolve("elsewhere"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    Path link = Files.createSymbolicLink(shared().resolve("hadoop-hpc-me"), elsewhere);
    refusedAndTcpUsed(link.resolve("sockets"));
    assertFalse(Files.exists(elsewhere.resolve("sockets")), "nothing made where it points");
  }

  @Test
  void onlyThisHostsAddressesAndTheBoundAddressCount() throws Exception {
    LocalSockets sockets = LocalSockets.of(tmp.resolve("s").toString());
    Path any = sockets.bindPath(new InetSocketAddress(9866)); // a wildcard listener
    Path one = sockets.bindPath(new InetSocketAddress("127.0.0.1", 9870)); // one address's
    try (ServerSocketChannel s = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ServerSocketChannel t = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      s.bind(UnixDomainSocketAddress.of(any));
      t.bind(UnixDomainSocketAddress.of(one));
      assertEquals(any, Path.of(sockets.find(new InetSocketAddress("127.0.0.1", 9866))
          .getPath().toString()), "a wildcard listener, at any of the host's addresses");
      assertEquals(any, Path.of(sockets.find(new InetSocketAddress("127.0.0.2", 9866))
          .getPath().toString()));
      assertNull(sockets.find(new InetSocketAddress("127.0.0.1", 9867)), "another port");
      assertNull(sockets.find(new InetSocketAddress("192.0.2.1", 9866)), "another host");
      assertEquals(one, Path.of(sockets.find(new InetSocketAddress("127.0.0.1", 9870))
          .getPath().toString()));
      assertNull(sockets.find(new InetSocketAddress("127.0.0.2", 9870)),
          "a listener bound to one address is not reached at another (TCP would refuse)");
    }
    assertFalse(LocalSockets.of("${hadoop.tmp.dir}/hpc-sockets").enabled(),
        "an unresolved default turns them off");
    assertFalse(LocalSockets.of("").enabled());
  }
}
