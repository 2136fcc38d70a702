/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A message transport with one contract and several implementations: {@code verbs} (RDMA over
 * InfiniBand/RoCE, through rdma-native) and {@code tcp} (NIO; IPoIB or Ethernet). Obtain one
 * from {@link TransportFactory}, which chooses by configuration and falls back with a logged
 * reason.
 *
 * <p>Model: two-sided request/response messages of up to
 * {@code hadoop.hpc.transport.max.message.size} bytes, plus one-sided reads and writes of
 * {@link RemoteRegion}s a peer has {@link #expose exposed}. All memory comes from
 * {@link #bufferPool()} (registered once for verbs). Every operation has a timeout; closing
 * fails whatever is pending.
 *
 * <p>Thread-safe. Callbacks ({@link RequestHandler}, {@link Completion}s, future completions) run
 * on the transport's event threads and must not block.
 */
public interface Transport extends AutoCloseable {

  /** "verbs" or "tcp". */
  String name();

  /** The pool every buffer sent or received through this transport comes from. */
  BufferPool bufferPool();

  /**
   * The transport's registered memory now: the pool's reserved and used bytes, the part of the
   * latter held by receive rings, and the bound. Every byte a transport registers is pool
   * memory, so {@code reservedBytes <= maxBytes} always holds.
   */
  RegisteredMemory registeredMemory();

  /** Accepts connections on {@code address} (port 0: any free port) and serves requests. */
  Listener listen(InetSocketAddress address, RequestHandler handler) throws IOException;

  /**
   * Connects to a listener. The future fails with {@link TransportException} (refused,
   * unreachable) or {@link TransportTimeoutException} after
   * {@code hadoop.hpc.transport.connect.timeout}.
   */
  CompletableFuture<Connection> connect(InetSocketAddress address);

  /**
   * Connects to a listener on the calling thread, waiting at most {@code timeoutMs} (and at most
   * {@code hadoop.hpc.transport.connect.timeout}), for callers that would wait for
   * {@link #connect(InetSocketAddress)} anyway and then read the connection themselves: where
   * the transport can, the connect is made without a hand-off to its event thread and back
   * (tcp: measured ~210 us of a 230 us loopback connect on a 2-core VM were those two
   * wake-ups), and the connection it returns already {@link Connection#leaveReadsToCallers()
   * leaves its reads to callers}. Must not be called on the transport's event thread. The
   * default waits for {@link #connect(InetSocketAddress)} (reads stay with the transport).
   *
   * @throws TransportTimeoutException when it took longer
   * @throws TransportException when it was refused, unreachable or the transport is closed
   */
  default Connection connect(InetSocketAddress address, long timeoutMs) throws IOException {
    CompletableFuture<Connection> f = connect(address);
    try {
      return f.get(Math.max(1, timeoutMs), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      f.cancel(false);
      throw new TransportTimeoutException("connect to " + address + " timed out after "
          + timeoutMs + " ms");
    } catch (InterruptedException e) {
      f.cancel(false);
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("connect to " + address + " interrupted");
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof TransportException) {
        throw (TransportException) cause;
      }
      throw new TransportException("cannot connect to " + address + ": " + cause, cause);
    }
  }

  /**
   * Makes {@code buffer}'s chunk readable and writable by peers through one-sided operations
   * until {@link #unexpose}. The buffer stays owned by the caller, who must unexpose before the
   * last release.
   */
  RemoteRegion expose(Buffer buffer) throws IOException;

  /** Ends one-sided access to a region; later remote operations on it fail. */
  void unexpose(RemoteRegion region);

  /** What this transport did: connections, bytes, failures ({@link TransportMetricsSource}). */
  TransportMetrics metrics();

  /** Closes listeners and connections (failing pending operations), then frees the pool. */
  @Override
  void close() throws IOException;
}
