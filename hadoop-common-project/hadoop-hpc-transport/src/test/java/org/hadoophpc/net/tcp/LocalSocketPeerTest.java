/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.fs.PrivateDirs;
import org.hadoophpc.fs.SharedPlaces;
import org.hadoophpc.net.ForeignPeerException;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A local-socket peer that runs as another user is refused on both sides (SO_PEERCRED), even
 * when its socket got where the owner checks would not look. The other user's process is a
 * small python3 program run as nobody (uid 65534) by {@code setpriv}: these tests need root and
 * are skipped otherwise (CI runs as root).
 */
class LocalSocketPeerTest {
  private static final int NOBODY = SharedPlaces.NOBODY;
  private static final InetSocketAddress LOOPBACK = new InetSocketAddress("127.0.0.1", 0);
  private static final RequestHandler ECHO = (conn, request, responder) ->
      responder.respond(request);

  /** Ours, under /tmp: short enough for a socket's path (107 bytes), unlike the build's. */
  private Path tmp;
  /** Where nobody may make and reach names, on the same file system as {@link #tmp}. */
  private Path open;
  private Process foreign;

  @BeforeEach
  void rootOnly() throws Exception {
    assumeTrue(PrivateDirs.processUid() == 0, "needs root to run a peer as another user");
    assumeTrue(Files.isExecutable(Path.of("/usr/bin/setpriv"))
        && Files.isExecutable(Path.of("/usr/bin/python3")), "needs setpriv and python3");
    tmp = Files.createTempDirectory(Path.of("/tmp"), "hpc-peer-");
    open = Files.createTempDirectory(Path.of("/tmp"), "hpc-open-");
    Files.setAttribute(open, "unix:mode", 0777);
  }

  @AfterEach
  void cleanUp() throws Exception {
    if (foreign != null) {
      foreign.destroyForcibly().waitFor(60, TimeUnit.SECONDS);
    }
    for (Path top : new Path[] {tmp, open}) {
      if (top != null) {
        try (Stream<Path> s = Files.walk(top)) {
          for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
            Files.delete(p);
          }
        }
      }
    }
  }

  private static Configuration conf(String dir) {
    Configuration c = new Configuration(false);
    c.set(TransportConfigKeys.IO_TIMEOUT_KEY, "20s");
    c.set(TransportConfigKeys.TCP_LOCAL_DIR_KEY, dir);
    return c;
  }

  /** python3 running {@code program} with {@code arg} as nobody; its output merged. */
  private Process asNobody(String program, String arg) throws Exception {
    foreign = new ProcessBuilder(List.of("/usr/bin/setpriv", "--reuid=" + NOBODY,
        "--regid=" + NOBODY, "--clear-groups", "/usr/bin/python3", "-c", program, arg))
        .redirectErrorStream(true).start();
    return foreign;
  }

  @Test
  void aClientRefusesAListenerOfAnotherUser() throws Exception {
    Path dir = tmp.resolve("s");
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(""))); // TCP only
        TcpTransport client = new TcpTransport(TransportConf.from(conf(dir.toString())))) {
      Listener l = server.listen(LOOPBACK, ECHO);
      Path name = LocalSockets.of(dir.toString()).bindPath(l.address()); // dir made, ours
      Path theirs = open.resolve("s");
      Process p = asNobody("import socket, sys\n"
          + "s = socket.socket(socket.AF_UNIX)\n"
          + "s.bind(sys.argv[1]); s.listen(8)\n"
          + "print('bound', flush=True)\n"
          + "sys.stdin.read()\n", theirs.toString());
      BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
          StandardCharsets.UTF_8));
      assertEquals("bound", out.readLine());
      // Their socket given our name and owner: only the peer's credentials tell it apart.
      Files.setAttribute(theirs, "unix:uid", 0, LinkOption.NOFOLLOW_LINKS);
      Files.move(theirs, name, StandardCopyOption.ATOMIC_MOVE);

      ForeignPeerException e = assertThrows(ForeignPeerException.class,
          () -> client.connect(l.address(), 10_000));
      assertTrue(e.getMessage().contains("runs as nobody"), e.getMessage());
      ExecutionException async = assertThrows(ExecutionException.class,
          () -> client.connect(l.address()).get(30, TimeUnit.SECONDS));
      assertInstanceOf(ForeignPeerException.class, async.getCause());
      assertEquals(2, client.metrics().foreignPeers());
      assertEquals(0, client.metrics().localConnections());
      assertEquals(2, client.metrics().connectFailures());
    }
  }

  @Test
  void aListenerRefusesAClientOfAnotherUser() throws Exception {
    Path dir = tmp.resolve("s");
    try (TcpTransport server = new TcpTransport(TransportConf.from(conf(dir.toString())))) {
      Listener l = server.listen(LOOPBACK, ECHO);
      Path socket = ((TcpListener) l).localPath();
      // A way in for nobody that the directory checks do not see: another name for the socket.
      // (chmod(1): Java's attribute views open the file, which a socket refuses)
      assertEquals(0, new ProcessBuilder("chmod", "0777", socket.toString()).inheritIO().start()
          .waitFor());
      Path door = Files.createLink(open.resolve("door"), socket);
      Process p = asNobody("import socket, sys\n"
          + "s = socket.socket(socket.AF_UNIX); s.settimeout(60)\n"
          + "s.connect(sys.argv[1])\n"
          + "print('read', len(s.recv(64)), flush=True)\n", door.toString());
      assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the foreign client did not end");
      String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals("read 0\n", said, "closed at once, unanswered");
      assertEquals(1, server.metrics().foreignPeers());
      assertEquals(0, server.metrics().localConnections());
    }
  }
}
