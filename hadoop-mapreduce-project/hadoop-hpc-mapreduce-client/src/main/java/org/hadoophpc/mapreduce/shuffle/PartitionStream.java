/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;

import org.hadoophpc.mapreduce.shuffle.protocol.ReadRequest;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;

/**
 * One map's partition as a stream, read in chunks with up to {@code window} read requests in
 * flight so the service reads ahead while Hadoop's merge code consumes. Each chunk must arrive
 * with exactly the length asked for: a short or long answer fails the stream (the caller reports
 * the map's output as bad, as stock does for a broken HTTP body). Not thread-safe.
 */
final class PartitionStream extends InputStream {
  private final Connection connection;
  private final BufferPool pool;
  private final long session;
  private final int map;
  private final long length;
  private final int chunk;
  private final int window;
  private final long timeoutMs;
  /** Bytes that arrived in answers (counted before they are checked). */
  private final java.util.concurrent.atomic.LongAdder received;
  private final ArrayDeque<CompletableFuture<Buffer>> pending = new ArrayDeque<>();
  private final ArrayDeque<Integer> pendingLengths = new ArrayDeque<>();
  private long requested;
  private long delivered;
  private Buffer current;
  private boolean closed;

  PartitionStream(Connection connection, BufferPool pool, long session, int map, long length,
      int chunk, int window, long timeoutMs, java.util.concurrent.atomic.LongAdder received) {
    this.connection = connection;
    this.pool = pool;
    this.session = session;
    this.map = map;
    this.length = length;
    this.chunk = chunk;
    this.window = window;
    this.timeoutMs = timeoutMs;
    this.received = received;
  }

  @Override
  public int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) throws IOException {
    if (closed) {
      throw new IOException("stream closed");
    }
    if (len == 0) {
      return 0;
    }
    if (delivered == length) {
      return -1;
    }
    if (current == null || current.readableBytes() == 0) {
      nextChunk();
    }
    int n = Math.min(len, current.readableBytes());
    current.nio().get(b, off, n);
    delivered += n;
    if (delivered == length) {
      current.release(); // all there: give the memory back without waiting for close
      current = null;
    }
    return n;
  }

  @Override
  public int available() {
    return current == null ? 0 : current.readableBytes();
  }

  /** Bytes handed to the reader so far. */
  long delivered() {
    return delivered;
  }

  private void nextChunk() throws IOException {
    if (current != null) {
      current.release();
      current = null;
    }
    fill();
    CompletableFuture<Buffer> f = pending.poll();
    int expected = pendingLengths.poll();
    Buffer b = Futures.await(f, timeoutMs, "read of " + expected + " bytes at "
        + (delivered) + " of map #" + map + " from " + connection.remoteAddress());
    received.add(b.readableBytes());
    if (b.readableBytes() != expected) {
      int got = b.readableBytes();
      b.release();
      throw new IOException("service answered " + got + " bytes for a read of " + expected
          + " at offset " + delivered + " of map #" + map + " (partition of " + length
          + " bytes)");
    }
    current = b;
    fill();
  }

  /** Issues read requests until the window is full or the partition is all requested. */
  private void fill() throws IOException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (pending.size() < window && requested < length) {
      int len = (int) Math.min(chunk, length - requested);
      Buffer req = pool.allocate(ReadRequest.BYTES);
      if (req == null) {
        if (!pending.isEmpty()) {
          return; // pool busy: the answers in flight free it
        }
        req = allocateWaiting(deadline);
      }
      new ReadRequest(session, map, requested, len).encode(req.nio());
      req.nio().flip();
      CompletableFuture<Buffer> f = connection.request(req);
      if (f == null) {
        req.release();
        if (!pending.isEmpty()) {
          return; // back-pressure: retry after an answer arrives
        }
        pause(deadline);
        continue;
      }
      pending.add(f);
      pendingLengths.add(len);
      requested += len;
    }
  }

  private Buffer allocateWaiting(long deadline) throws IOException {
    long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
    try {
      return pool.allocate(ReadRequest.BYTES, left);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted waiting for transport memory");
    }
  }

  private void pause(long deadline) throws IOException {
    if (System.nanoTime() > deadline) {
      throw new IOException("connection to " + connection.remoteAddress() + " stayed at its"
          + " in-flight limit for " + timeoutMs + " ms");
    }
    try {
      Thread.sleep(1);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted");
    }
  }

  /** Releases the current chunk and, as they arrive, the chunks still in flight. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (current != null) {
      current.release();
      current = null;
    }
    for (CompletableFuture<Buffer> f : pending) {
      Futures.release(f);
    }
    pending.clear();
    pendingLengths.clear();
  }
}
