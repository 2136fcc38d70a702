/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnixDomainSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.channels.SocketChannel;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.CRC32;

import jdk.net.ExtendedSocketOptions;
import org.hadoophpc.fs.PrivateDirs;
import org.hadoophpc.net.ForeignPeerException;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: which peers a tcp connection reaches through a Unix domain socket instead of TCP,
 * and where that socket is. A peer on this host (its address is one of this network
 * namespace's) whose listener also bound a socket in {@code hadoop.hpc.transport.tcp.local.dir}
 * is reached there: the same frames, without the TCP stack (measured on loopback: ~0.2 s of
 * CPU per GB against ~0.35 for TCP). Everything else goes over TCP.
 *
 * <p>Trust: the directory and every one above it up to the shared place it is in (such as
 * {@code /tmp}) must belong to this process's user, mode 700, and be no links
 * ({@link PrivateDirs}); a socket is used only if that user owns it, and a connection only if
 * the process at its other end runs as that user (SO_PEERCRED, {@link #checkPeer}). So only
 * processes of the same user meet there (a DataNode's clients of another user find no
 * directory of theirs and use TCP). A
 * socket's name holds what the TCP listener bound (its address, or "any", and its port), the
 * host name and the network namespace: two listeners that TCP tells apart never share a name
 * (not in different namespaces, not on hosts sharing the directory, not on two addresses of
 * one host), and a client looks up the address it would connect to, then "any".
 */
final class LocalSockets {
  private static final Logger LOG = LoggerFactory.getLogger(LocalSockets.class);
  /** sun_path holds 108 bytes with its terminating NUL. */
  private static final int MAX_PATH_BYTES = 107;
  private static final int MAX_CACHED_ADDRESSES = 4096;
  /**
   * Bytes a local socket's writer may have queued at its reader: Linux's default (208 KiB) made
   * HDFS writes take ~15% more system calls per MiB than over TCP, whose buffers grow to MiBs.
   */
  static final int SEND_BUFFER = 1 << 20;

  private final Path dir;
  private final String scope;
  private final ConcurrentHashMap<InetAddress, Boolean> local = new ConcurrentHashMap<>();
  private static final long DIR_CHECK_NANOS = 1_000_000_000L;
  /** Until when the directory's last check holds (System.nanoTime()). */
  private volatile long dirTrustedUntil = System.nanoTime() - DIR_CHECK_NANOS;
  /** Set once the directory failed its check: the reason, said once. */
  private volatile String unusable;

  private LocalSockets(Path dir, String scope) {
    this.dir = dir;
    this.scope = scope;
  }

  /** From the configured directory; empty or unresolved ({@code ${...}}) turns them off. */
  static LocalSockets of(String dir) {
    if (dir == null || dir.isEmpty() || dir.contains("${")) {
      return new LocalSockets(null, "");
    }
    return new LocalSockets(Path.of(dir).toAbsolutePath(), scope());
  }

  boolean enabled() {
    return dir != null && unusable == null;
  }

  /** Host name (the kernel's: no name service asked) and network namespace, hashed. */
  private static String scope() {
    String host;
    try {
      host = Files.readString(Path.of("/proc/sys/kernel/hostname")).trim();
    } catch (IOException | RuntimeException e) {
      host = String.valueOf(System.getenv("HOSTNAME"));
    }
    String ns;
    try {
      ns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      ns = "";
    }
    CRC32 crc = new CRC32();
    crc.update((host + "/" + ns).getBytes(StandardCharsets.UTF_8));
    return Long.toHexString(crc.getValue());
  }

  /**
   * The socket of this host's listener bound to {@code bound} (a name, not a check); a wildcard
   * address gives the name of a listener on every address of the host.
   */
  Path pathFor(InetSocketAddress bound) {
    InetAddress a = bound.getAddress();
    String at = a == null || a.isAnyLocalAddress() ? "any" : a.getHostAddress();
    return dir.resolve("tcp-" + at + "-" + bound.getPort() + "-" + scope);
  }

  /**
   * The path a listener bound to {@code bound} binds, its directory made and checked, any stale
   * socket of an earlier process removed (safe: this process holds the TCP address and port the
   * name is made of); null when local sockets are off or cannot be used here (said once at
   * WARN).
   */
  Path bindPath(InetSocketAddress bound) {
    if (!enabled()) {
      return null;
    }
    Path p = pathFor(bound);
    try {
      if (p.toString().getBytes(StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
        if (unusable == null) { // a deep directory is no fault: no WARN
          unusable = "path too long";
          LOG.info("not listening on local sockets: the path {} is longer than a Unix"
              + " socket's {} bytes; same-host peers use TCP (a shorter {} turns them on)", p,
              MAX_PATH_BYTES, TransportConfigKeys.TCP_LOCAL_DIR_KEY);
        }
        return null;
      }
      PrivateDirs.create(dir);
      Files.deleteIfExists(p);
      return p;
    } catch (IOException | UnsupportedOperationException e) {
      markUnusable(e.getMessage());
      return null;
    }
  }

  /**
   * Where the listener at {@code address} can be reached on this host, or null: local sockets
   * off, the address not this host's, or no trusted socket there (the listener has none, or it
   * belongs to another process).
   */
  UnixDomainSocketAddress find(InetSocketAddress address) {
    if (!enabled() || address.isUnresolved() || !isLocal(address.getAddress())) {
      return null;
    }
    UnixDomainSocketAddress at = trusted(pathFor(address));
    return at != null || address.getAddress().isAnyLocalAddress() ? at
        : trusted(pathFor(new InetSocketAddress(address.getPort())));
  }

  /** {@code p} when a socket of this user is there in a trusted directory, else null. */
  private UnixDomainSocketAddress trusted(Path p) {
    try {
      Map<String, Object> a = Files.readAttributes(p, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
      if (((Integer) a.get("mode") & S_IFMT) != S_IFSOCK
          || (Integer) a.get("uid") != PrivateDirs.processUid()) {
        return null;
      }
      long now = System.nanoTime();
      if (now - dirTrustedUntil > 0) { // checked again once a second, not at every connect
        PrivateDirs.create(dir); // there already: every component checked, nothing made
        dirTrustedUntil = now + DIR_CHECK_NANOS;
      }
      return UnixDomainSocketAddress.of(p);
    } catch (IOException | RuntimeException e) {
      return null; // no socket there, or not in a directory of ours alone: TCP
    }
  }

  /**
   * Refuses a connected local socket whose peer runs as another user (the kernel's SO_PEERCRED,
   * read once per connection: the owner checks of the directory and socket file keep others
   * out, this keeps them out even if a socket of theirs got in). Counted in {@code metrics}.
   * The JDK turns the uid and gid into principals by name service calls: ~25 us per connection
   * on each side (measured with /etc/passwd on a 2-core VM), against a connection's MBs.
   */
  static void checkPeer(SocketChannel ch, Object at, TransportMetrics metrics)
      throws IOException {
    UserPrincipal peer = ch.getOption(ExtendedSocketOptions.SO_PEERCRED).user();
    if (!peer.equals(self())) {
      metrics.foreignPeer();
      throw new ForeignPeerException("refused the local socket connection " + at + ": the peer"
          + " process runs as " + peer.getName() + ", not as this process's user "
          + System.getProperty("user.name") + " (only one user's processes meet by local"
          + " socket; check who can write to " + TransportConfigKeys.TCP_LOCAL_DIR_KEY + ")");
    }
  }

  private static UserPrincipal self;

  /** This process's user, as SO_PEERCRED's principals compare (by uid). */
  private static synchronized UserPrincipal self() throws IOException {
    if (self == null) {
      self = Files.getOwner(Path.of("/proc/self"), LinkOption.NOFOLLOW_LINKS);
    }
    return self;
  }

  private static final int S_IFMT = 0170000;
  private static final int S_IFSOCK = 0140000;

  private boolean isLocal(InetAddress a) {
    if (a.isLoopbackAddress() || a.isAnyLocalAddress()) {
      return true;
    }
    Boolean known = local.get(a);
    if (known != null) {
      return known;
    }
    boolean is;
    try {
      is = NetworkInterface.getByInetAddress(a) != null;
    } catch (SocketException e) {
      is = false;
    }
    if (local.size() < MAX_CACHED_ADDRESSES) {
      local.put(a, is);
    }
    return is;
  }

  private void markUnusable(String why) {
    if (unusable == null) {
      unusable = why;
      LOG.warn("not listening on local sockets ({}): {}; same-host peers use TCP. Set {} to a"
          + " directory of this user's alone (mode 700), or empty to turn this off",
          dir, why, TransportConfigKeys.TCP_LOCAL_DIR_KEY);
    }
  }

  @Override
  public String toString() {
    return dir == null ? "off" : dir.toString();
  }
}
