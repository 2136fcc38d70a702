/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * One reliable, ordered connection between two transports.
 *
 * <p>Data-plane calls never block and never throw for back-pressure: when
 * {@code hadoop.hpc.transport.max.inflight} operations are outstanding they return {@code null}
 * and the caller keeps ownership of its buffer; retry after an earlier future completes.
 * Futures complete on the transport's event thread; they fail with
 * {@link ConnectionClosedException} when the connection closes or the peer dies, and with
 * {@link TransportTimeoutException} after {@code hadoop.hpc.transport.io.timeout}.
 *
 * <p>Thread-safe.
 */
public interface Connection extends AutoCloseable {

  InetSocketAddress remoteAddress();

  boolean isOpen();

  /** Operations started and not yet completed. */
  int inFlight();

  /**
   * Sends {@code request} (its bytes between position and limit; ownership passes to the
   * transport) and completes with the peer's response, which the caller must release. A handler
   * failure on the peer completes the future with a {@link TransportException} carrying its
   * message. Returns {@code null} under back-pressure.
   */
  CompletableFuture<Buffer> request(Buffer request);

  /**
   * Reads {@code length} bytes at {@code offset} of the peer's {@code region} into
   * {@code destination} at its position (which advances). {@code destination} stays owned by
   * the caller and must not be released before the future completes. {@code null} under
   * back-pressure.
   */
  CompletableFuture<Void> read(RemoteRegion region, long offset, int length, Buffer destination);

  /**
   * Writes {@code source}'s bytes between position and limit (the position is not changed) to
   * the peer's {@code region} at
   * {@code offset}. {@code source} stays owned by the caller until the future completes.
   * {@code null} under back-pressure.
   */
  CompletableFuture<Void> write(Buffer source, RemoteRegion region, long offset);

  /** Closes the connection; pending operations fail with {@link ConnectionClosedException}. */
  @Override
  void close();
}
