/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

import org.hadoophpc.mapreduce.shuffle.ServiceLimits;
import org.hadoophpc.net.Connection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admission stage before trust: connections accepted whose peer has not yet proved a job
 * token (its first open), at most {@link ServiceLimits#untrusted()} in total and
 * {@link ServiceLimits#untrustedPerAddress()} from one address. One more closes the oldest
 * waiting connection of its address, else the oldest of all; never the newcomer. So a flood of
 * connections that never prove anything cannot keep a reducer out: a reducer proves itself one
 * round trip after it connects, and a flood would have to push that many connections through
 * the stage within it. The transport bounds the rest (frame size, one request at a time, the
 * deadline to authenticate; see {@code MapOutputServer}'s hooks).
 *
 * <p>Thread-safe: one lock; closing happens outside it.
 */
final class UntrustedPeers {
  private static final Logger LOG = LoggerFactory.getLogger(UntrustedPeers.class);

  private final int max;
  private final int perAddressMax;
  private final ShuffleServiceMetrics metrics;
  /** Waiting connections, oldest first, with their address. */
  private final LinkedHashMap<Connection, InetAddress> waiting = new LinkedHashMap<>();
  private final Map<InetAddress, ArrayDeque<Connection>> byAddress = new HashMap<>();
  /** When an eviction was last logged (one line per 10 s, not one per connection). */
  private long lastLogNanos;

  UntrustedPeers(ServiceLimits limits, ShuffleServiceMetrics metrics) {
    this.max = limits.untrusted();
    this.perAddressMax = limits.untrustedPerAddress();
    this.metrics = metrics;
  }

  /** {@code c} was accepted: it waits to prove a token, pushing out the oldest at a cap. */
  void connected(Connection c) {
    InetSocketAddress remote = c.remoteAddress();
    InetAddress from = remote == null ? null : remote.getAddress();
    Connection evicted = null;
    String why = null;
    synchronized (this) {
      ArrayDeque<Connection> same = byAddress.get(from);
      if (same != null && same.size() >= perAddressMax) {
        evicted = same.pollFirst();
        waiting.remove(evicted);
        why = perAddressMax + " from " + from;
      } else if (waiting.size() >= max) {
        Iterator<Map.Entry<Connection, InetAddress>> oldest = waiting.entrySet().iterator();
        Map.Entry<Connection, InetAddress> e = oldest.next();
        oldest.remove();
        evicted = e.getKey();
        dropFromAddress(evicted, e.getValue());
        why = max + " in total";
      }
      byAddress.computeIfAbsent(from, a -> new ArrayDeque<>()).addLast(c);
      waiting.put(c, from);
      metrics.untrustedConnections.set(waiting.size());
      if (evicted != null && logNow()) {
        LOG.warn("hpc shuffle: closing the oldest connection that has not proved a job token"
            + " ({}), to admit one from {}: at most {} wait (further ones within 10 s not"
            + " logged)", evicted.remoteAddress(), remote, why);
      }
    }
    if (evicted != null) {
      metrics.untrustedEvicted.incr();
      evicted.close();
    }
  }

  /** {@code c} proved a job token: it leaves the stage. */
  void trusted(Connection c) {
    leave(c);
  }

  /**
   * {@code c} closed. One that was still waiting is counted: it closed before it proved a
   * token (the transport's deadline passed, it broke a frame rule, or the peer left).
   */
  void closed(Connection c) {
    if (leave(c)) {
      metrics.untrustedClosed.incr();
    }
  }

  synchronized int waiting() {
    return waiting.size();
  }

  private synchronized boolean leave(Connection c) {
    if (!waiting.containsKey(c)) {
      return false;
    }
    dropFromAddress(c, waiting.remove(c));
    metrics.untrustedConnections.set(waiting.size());
    return true;
  }

  private void dropFromAddress(Connection c, InetAddress from) {
    ArrayDeque<Connection> same = byAddress.get(from);
    if (same != null) {
      same.remove(c);
      if (same.isEmpty()) {
        byAddress.remove(from);
      }
    }
  }

  private boolean logNow() {
    long now = System.nanoTime();
    if (lastLogNanos != 0 && now - lastLogNanos < 10_000_000_000L) {
      return false;
    }
    lastLogNanos = now;
    return true;
  }
}
