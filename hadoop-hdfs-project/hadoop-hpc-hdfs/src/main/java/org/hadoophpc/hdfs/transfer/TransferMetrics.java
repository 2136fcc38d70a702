/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What crossed the transport for HDFS DataTransfer in one process role: connections opened by
 * role and transport, bytes in and out over the transport, fallbacks to TCP by reason. One
 * instance per DataNode endpoint and one per client process, found by name
 * ({@link #of(String)}) so tests and the INFO line read the same numbers; metrics2 and JMX
 * read them through {@link TransferMetricsSource}. Thread-safe.
 */
public final class TransferMetrics {
  /** Who opened or accepted the connection. */
  public enum Role { CLIENT, MIRROR, SERVER }

  /** Why a connection went over TCP instead. */
  public enum Fallback {
    DISABLED, NO_TRANSPORT, NEGATIVE_CACHED, CONNECT_FAILED, HELLO_REJECTED, BUSY,
    LOCAL_INTERFACES, ADDRESS,
    /**
     * A DataNode on a privileged transfer port while HDFS would skip SASL towards it
     * ({@link PrivilegedPortCheck#clientProblem}).
     */
    PRIVILEGED_PORT
  }

  private static final Map<String, TransferMetrics> ALL = new ConcurrentHashMap<>();
  private static final String CLIENT_NAME = "client";

  private final String name;
  private final Map<Role, AtomicLong> overTransport = new EnumMap<>(Role.class);
  private final Map<Role, AtomicLong> overTcp = new EnumMap<>(Role.class);
  private final Map<Fallback, AtomicLong> fallbacks = new EnumMap<>(Fallback.class);
  private final AtomicLong bytesIn = new AtomicLong();
  private final AtomicLong bytesOut = new AtomicLong();
  private final AtomicLong helloRetries = new AtomicLong();
  private volatile String transport = "none";
  /**
   * The tcp transports' own counters (for their local-socket connections): a process's client
   * streams may use several (one per distinct transport configuration).
   */
  private final java.util.List<org.hadoophpc.net.TransportMetrics> tcpTransports =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile String stockTcpReason = "not started";
  /** The client side also counts into the job's File System Counters (TransferJobCounters). */
  private final boolean jobCounters;

  private TransferMetrics(String name) {
    this.name = name;
    this.jobCounters = CLIENT_NAME.equals(name);
    for (Role r : Role.values()) {
      overTransport.put(r, new AtomicLong());
      overTcp.put(r, new AtomicLong());
    }
    for (Fallback f : Fallback.values()) {
      fallbacks.put(f, new AtomicLong());
    }
  }

  /** The metrics called {@code name}, created on first use. */
  public static TransferMetrics of(String name) {
    return ALL.computeIfAbsent(name, TransferMetrics::new);
  }

  /** The client side of this process (DFSClients and DataNode mirrors share a factory). */
  public static TransferMetrics client() {
    return of(CLIENT_NAME);
  }

  /** The server side of the DataNode whose TCP transfer port is {@code xferPort}. */
  public static TransferMetrics server(int xferPort) {
    return of("datanode-" + xferPort);
  }

  public String name() {
    return name;
  }

  /** Streams go over {@code name} ("verbs", "tcp") where the peer serves it. */
  void usingTransport(String name) {
    stockTcpReason = "";
    transport = name;
  }

  /** Streams go over {@code t}; on tcp its same-host local-socket connections are shown too. */
  void usingTransport(org.hadoophpc.net.Transport t) {
    usingTransport(t.name());
    if ("tcp".equals(t.name()) && !tcpTransports.contains(t.metrics())) {
      tcpTransports.add(t.metrics());
    }
  }

  /** Streams go over stock TCP only, because of {@code reason}. */
  void usingStockTcp(String reason) {
    transport = "none";
    stockTcpReason = reason;
  }

  /** The transport streams use where they can ("verbs", "tcp"), or "none". */
  public String transport() {
    return transport;
  }

  /** Why {@link #transport()} is "none" (empty otherwise). */
  public String stockTcpReason() {
    return stockTcpReason;
  }

  void opened(Role role) {
    overTransport.get(role).incrementAndGet();
  }

  void fellBack(Role role, Fallback why) {
    overTcp.get(role).incrementAndGet();
    fallbacks.get(why).incrementAndGet();
  }

  /** A HELLO went unanswered and was tried once more on a new connection. */
  void helloRetried() {
    helloRetries.incrementAndGet();
  }

  public long helloRetries() {
    return helloRetries.get();
  }

  void bytesIn(long n) {
    bytesIn.addAndGet(n);
    if (jobCounters) {
      TransferJobCounters.read(n);
    }
  }

  void bytesOut(long n) {
    bytesOut.addAndGet(n);
    if (jobCounters) {
      TransferJobCounters.written(n);
    }
  }

  /** Connections of {@code role} that went over the transport. */
  public long connections(Role role) {
    return overTransport.get(role).get();
  }

  /** Connections of {@code role} that went over plain TCP. */
  public long tcpConnections(Role role) {
    return overTcp.get(role).get();
  }

  public long fallbacks(Fallback why) {
    return fallbacks.get(why).get();
  }

  public long fallbacks() {
    long n = 0;
    for (AtomicLong a : fallbacks.values()) {
      n += a.get();
    }
    return n;
  }

  /**
   * tcp: connections of the transport streams use that went by a same-host Unix socket, of
   * every kind (made and accepted); -1 where the transport is not tcp or not known.
   */
  public long localConnections() {
    if (tcpTransports.isEmpty()) {
      return -1;
    }
    return tcpTransports.stream().mapToLong(m -> m.localConnections()).sum();
  }

  /** Stream bytes read from the transport (not counting protocol headers). */
  public long bytesIn() {
    return bytesIn.get();
  }

  /** Stream bytes written to the transport (not counting protocol headers). */
  public long bytesOut() {
    return bytesOut.get();
  }

  @Override
  public String toString() {
    return name + ": transport " + transport + ", connections over it " + overTransport
        + ", over tcp " + overTcp + ", bytes in " + bytesIn + ", out " + bytesOut
        + ", fallbacks " + fallbacks + ", HELLO retries " + helloRetries
        + (tcpTransports.isEmpty() ? "" : ", of the transport's connections by same-host"
            + " local sockets " + localConnections() + " of " + tcpTransports.stream()
                .mapToLong(m -> m.connectionsOpened()).sum());
  }
}
