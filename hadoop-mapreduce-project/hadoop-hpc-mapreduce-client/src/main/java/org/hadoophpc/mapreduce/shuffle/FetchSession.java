/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.Closeable;
import java.io.InputStream;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.hadoophpc.mapreduce.shuffle.protocol.CloseRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.SessionLayout;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;

/**
 * An open fetch: the service has checked the reducer's token, found the partitions it asked for
 * (see {@link #partitions()}) and started reading the first chunk of their stream. Read each,
 * in order, with {@link #stream}; {@link #close} ends the session on the service.
 */
public final class FetchSession implements Closeable {
  private final ShuffleFetchClient client;
  private final Connection connection;
  private final OpenResponse response;
  /** The session's id: both sides derive it from the open's nonces, it is never sent. */
  private final long session;
  private final int port;
  private final String transport;
  /** The pool of the connection's transport: requests of this session come from it. */
  private final BufferPool pool;
  /** The connection leaves its reads to the threads waiting on it. */
  private final boolean callerReads;
  private final java.util.concurrent.atomic.LongAdder received =
      new java.util.concurrent.atomic.LongAdder();
  /** The session's bytes, made by the first {@link #stream} call. */
  private SessionStream stream;

  FetchSession(ShuffleFetchClient client, Connection connection, OpenResponse response,
      long session, int port, String transport, BufferPool pool, boolean callerReads) {
    this.session = session;
    this.callerReads = callerReads;
    this.client = client;
    this.connection = connection;
    this.response = response;
    this.port = port;
    this.transport = transport;
    this.pool = pool;
  }

  /** The transport the session's bytes come over: verbs, or tcp. */
  public String transportName() {
    return transport;
  }

  /** One entry per requested map, in request order. */
  public List<OpenResponse.Partition> partitions() {
    return response.partitions();
  }

  /** The service port that answered. */
  public int port() {
    return port;
  }

  /**
   * The partition of map number {@code i}, streamed with reads in flight that run on into the
   * next maps' partitions; maps are read in increasing order (see {@link SessionStream#map}).
   */
  public InputStream stream(int i) {
    OpenResponse.Partition p = response.partitions().get(i);
    if (p.status() != OpenResponse.Status.OK) {
      throw new IllegalStateException("map #" + i + " is " + p.status() + ": " + p.message());
    }
    if (stream == null) {
      stream = new SessionStream(connection, pool, session,
          SessionLayout.of(response.partitions()), client.chunkSize(transport),
          client.conf().fetchInflight(transport), client.waitMs(), received, callerReads);
    }
    return stream.map(i);
  }

  /** Map-output bytes that arrived from the service in this session's answers so far. */
  public long bytesReceived() {
    return received.sum();
  }

  /** Ends the session on the service (not waiting for its answer). */
  @Override
  public void close() {
    if (stream != null) {
      stream.close();
    }
    if (!connection.isOpen()) {
      return;
    }
    Buffer req = pool.allocate(CloseRequest.BYTES);
    if (req == null) {
      return; // the service drops the session with the connection or its job
    }
    new CloseRequest(session).encode(req.nio());
    req.nio().flip();
    CompletableFuture<Buffer> f = connection.request(req);
    if (f == null) {
      req.release();
    } else {
      Futures.release(f);
    }
  }
}
