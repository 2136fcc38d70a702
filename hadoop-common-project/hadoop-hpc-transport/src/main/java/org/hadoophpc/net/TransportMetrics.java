/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

/**
 * What one {@link Transport} did, counted where it happened: connections opened (connected or
 * accepted), connects that failed, connections closed; bytes sent and received as messages
 * (tcp: every frame, header included, one-sided data too since tcp carries it in frames; verbs:
 * every SEND, header included, counted when its work request completed); verbs' one-sided bytes
 * (completed RDMA READs and WRITEs this side started, rendezvous payloads included; 0 on tcp);
 * operations that ended in failure, by kind. Thread-safe and cheap ({@link LongAdder}s).
 * {@link TransportMetricsSource} shows them as a metrics2 source.
 */
public final class TransportMetrics {
  private final LongAdder opened = new LongAdder();
  private final LongAdder closed = new LongAdder();
  private final LongAdder connectFailures = new LongAdder();
  private final LongAdder bytesSent = new LongAdder();
  private final LongAdder bytesReceived = new LongAdder();
  private final LongAdder rdmaRead = new LongAdder();
  private final LongAdder rdmaWritten = new LongAdder();
  private final LongAdder timeouts = new LongAdder();
  private final LongAdder remoteErrors = new LongAdder();
  private final LongAdder closedUnderOps = new LongAdder();
  private final LongAdder local = new LongAdder();
  private final LongAdder foreignPeers = new LongAdder();

  /** A connection came to life (connected or accepted). */
  public void opened() {
    opened.increment();
  }

  /** tcp: a connection (connected or accepted) goes by a same-host Unix domain socket. */
  public void localConnection() {
    local.increment();
  }

  /**
   * tcp: a local-socket connection refused because its peer runs as another user
   * ({@link ForeignPeerException}).
   */
  public void foreignPeer() {
    foreignPeers.increment();
  }

  /** A connection that {@link #opened} is gone. */
  public void closed() {
    closed.increment();
  }

  /**
   * The caller's side of a connect: a future that completes like {@code connect} once its
   * outcome is counted (a failure here; a connection counts itself), so a caller that sees the
   * failure also sees the count. A caller that gives up first (cancels, completes it) fails
   * {@code connect} too, as if it had held that future; a connection that arrives after that is
   * closed.
   */
  public CompletableFuture<Connection> countConnect(CompletableFuture<Connection> connect) {
    CompletableFuture<Connection> out = new CompletableFuture<>();
    connect.whenComplete((c, e) -> {
      if (e != null) {
        connectFailures.increment();
        out.completeExceptionally(e);
      } else if (!out.complete(c)) {
        c.close();
      }
    });
    out.whenComplete((c, e) -> {
      if (e != null) {
        connect.completeExceptionally(e);
      }
    });
    return out;
  }

  /**
   * A connect made on the caller's thread failed
   * ({@link Transport#connect(java.net.InetSocketAddress, long)}).
   */
  public void connectFailed() {
    connectFailures.increment();
  }

  public void sent(long bytes) {
    bytesSent.add(bytes);
  }

  public void received(long bytes) {
    bytesReceived.add(bytes);
  }

  public void rdmaRead(long bytes) {
    rdmaRead.add(bytes);
  }

  public void rdmaWritten(long bytes) {
    rdmaWritten.add(bytes);
  }

  /** An operation (request, read, write) ended with {@code failure}. */
  public void failed(Throwable failure) {
    Throwable t = failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause() : failure;
    if (t instanceof TransportTimeoutException) {
      timeouts.increment();
    } else if (t instanceof RemoteFailureException) {
      remoteErrors.increment();
    } else {
      closedUnderOps.increment();
    }
  }

  public long connectionsOpened() {
    return opened.sum();
  }

  public long connectionsClosed() {
    return closed.sum();
  }

  /** Open now: opened minus closed. */
  public long connectionsOpen() {
    return opened.sum() - closed.sum();
  }

  /** tcp: connections (connected or accepted) by a same-host Unix domain socket. */
  public long localConnections() {
    return local.sum();
  }

  /** tcp: local-socket connections refused because their peer was another user's. */
  public long foreignPeers() {
    return foreignPeers.sum();
  }

  public long connectFailures() {
    return connectFailures.sum();
  }

  public long bytesSent() {
    return bytesSent.sum();
  }

  public long bytesReceived() {
    return bytesReceived.sum();
  }

  public long rdmaBytesRead() {
    return rdmaRead.sum();
  }

  public long rdmaBytesWritten() {
    return rdmaWritten.sum();
  }

  /** Operations past {@code hadoop.hpc.transport.io.timeout}. */
  public long timeouts() {
    return timeouts.sum();
  }

  /** Operations the peer refused or failed (an error answer). */
  public long remoteErrors() {
    return remoteErrors.sum();
  }

  /** Operations failed because their connection closed or broke under them. */
  public long failedByClose() {
    return closedUnderOps.sum();
  }
}
