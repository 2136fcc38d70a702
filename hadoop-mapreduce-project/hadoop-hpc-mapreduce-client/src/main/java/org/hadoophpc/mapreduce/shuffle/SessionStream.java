/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

import org.hadoophpc.mapreduce.shuffle.protocol.ReadRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.SessionLayout;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;

/**
 * A fetch session's byte stream ({@link SessionLayout}: its served partitions one after the
 * other) read in reads of {@code chunk} bytes with up to {@code window} in flight, so the service
 * reads ahead while Hadoop's merge code consumes, and a read runs on from one partition into the
 * next: many small partitions come in one answer. {@link #map} hands out each partition as its
 * own stream. Each answer must carry exactly the bytes asked for, or end early where a partition
 * starts (the service could not read that partition: the stream asks again from there, so that
 * map's read fails on its own); any other short or long answer fails the stream (the caller
 * reports the map being read as bad, as stock does for a broken HTTP body). Not thread-safe.
 */
final class SessionStream {
  private final Connection connection;
  /** This stream's thread reads the connection itself while it waits for an answer. */
  private final boolean callerReads;
  private final BufferPool pool;
  private final long session;
  private final SessionLayout layout;
  private final int chunk;
  private final int window;
  private final long timeoutMs;
  /** Bytes that arrived in answers (counted before they are checked). */
  private final LongAdder received;
  private final ArrayDeque<CompletableFuture<Buffer>> pending = new ArrayDeque<>();
  private final ArrayDeque<Integer> pendingLengths = new ArrayDeque<>();
  /** Where each pending read starts in the stream. */
  private final ArrayDeque<Long> pendingStarts = new ArrayDeque<>();
  /** Stream bytes asked for, and handed to readers (or skipped), so far. */
  private long requested;
  private long delivered;
  private Buffer current;
  private IOException broken;
  private boolean closed;
  /** Partitions read out of the stream's order, each a stream of its own. */
  private final java.util.List<SessionStream> detached = new java.util.ArrayList<>();

  SessionStream(Connection connection, BufferPool pool, long session, SessionLayout layout,
      int chunk, int window, long timeoutMs, LongAdder received, boolean callerReads) {
    this(connection, pool, session, layout, chunk, window, timeoutMs, received, callerReads, 0);
  }

  /** A stream whose reads start at byte {@code from} of {@code layout}. */
  private SessionStream(Connection connection, BufferPool pool, long session,
      SessionLayout layout, int chunk, int window, long timeoutMs, LongAdder received,
      boolean callerReads, long from) {
    this.callerReads = callerReads;
    this.connection = connection;
    this.pool = pool;
    this.session = session;
    this.layout = layout;
    this.chunk = chunk;
    this.window = window;
    this.timeoutMs = timeoutMs;
    this.received = received;
    this.requested = from;
    this.delivered = from;
  }

  /**
   * Map {@code i}'s partition as a stream. Read in the session's order (each map after the one
   * before it) the partitions share the stream's reads; a partition read out of that order
   * (the stream has moved past where this one is) gets reads of its own, confined to it.
   */
  InputStream map(int i) {
    if (!layout.served(i)) {
      throw new IllegalStateException("map #" + i + " is not served in this session");
    }
    long start = layout.start(i);
    return new PartitionView(i, start, start + layout.length(i), start);
  }

  /** Releases the current answer and, as they arrive, the answers still in flight. */
  void close() {
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
    pendingStarts.clear();
    for (SessionStream p : detached) {
      p.close();
    }
    detached.clear();
  }

  /**
   * One partition of the stream: [start, end); {@code pos} is where this reader is. While the
   * stream is at {@code pos} (or before it) the partition reads the stream; once the stream has
   * moved past, it reads a stream of its own: the layout with this partition alone, from
   * {@code pos} on (its reads stay inside the partition, as the service allows).
   */
  private final class PartitionView extends InputStream {
    private final int map;
    private final long start;
    private final long end;
    private long pos;
    /** This partition's own stream and its reader, once the stream moved past {@code pos}. */
    private SessionStream ownStream;
    private PartitionView own;

    PartitionView(int map, long start, long end, long pos) {
      this.map = map;
      this.start = start;
      this.end = end;
      this.pos = pos;
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
      if (pos >= end) {
        return -1;
      }
      if (own == null && delivered > pos) {
        SessionLayout alone = layout.only(map);
        long from = pos - start;
        ownStream = new SessionStream(connection, pool, session, alone, chunk, window,
            timeoutMs, received, callerReads, from);
        own = ownStream.new PartitionView(map, 0, end - start, from);
        detached.add(ownStream);
      }
      if (own != null) {
        int n = own.read(b, off, (int) Math.min(len, end - pos));
        if (n > 0) {
          pos += n;
        }
        return n;
      }
      while (delivered < pos) {
        passOver(pos - delivered);
      }
      int n = (int) Math.min(len, end - delivered);
      n = Math.min(n, ensure());
      current.nio().get(b, off, n);
      delivered += n;
      pos += n;
      if (delivered == layout.total()) {
        current.release(); // all there: give the memory back without waiting for close
        current = null;
      }
      return n;
    }

    @Override
    public int available() {
      if (own != null) {
        return own.available();
      }
      if (current == null || delivered != pos) {
        return 0;
      }
      return (int) Math.min(current.readableBytes(), end - delivered);
    }

    @Override
    public void close() {
      if (own != null) {
        ownStream.close();
        detached.remove(ownStream);
        own = null;
        ownStream = null;
      }
    }

    private void passOver(long n) throws IOException {
      int k = (int) Math.min(n, ensure());
      current.nio().position(current.nio().position() + k);
      delivered += k;
    }

    private int ensure() throws IOException {
      if (current == null || current.readableBytes() == 0) {
        nextAnswer(map);
      }
      return current.readableBytes();
    }

    @Override
    public String toString() {
      return "map #" + map + " [" + start + ", " + end + ") of " + layout;
    }
  }

  private void nextAnswer(int map) throws IOException {
    if (broken != null) {
      throw broken;
    }
    if (current != null) {
      current.release();
      current = null;
    }
    try {
      fill();
      CompletableFuture<Buffer> f = pending.poll();
      int expected = pendingLengths.poll();
      long at = pendingStarts.poll();
      Buffer b = Futures.await(callerReads ? connection : null, f, timeoutMs,
          "read of " + expected + " bytes at byte "
          + delivered + " of the session (in map #" + map + ") from "
          + connection.remoteAddress());
      int got = b.readableBytes();
      received.add(got);
      if (got != expected) {
        if (!(got > 0 && got < expected && startsPartition(at + got))) {
          b.release();
          throw new IOException("service answered " + got + " bytes for a read of " + expected
              + " at byte " + delivered + " of the session (in map #" + map + ", " + layout
              + ")");
        }
        // it could not read the partition at at + got: ask again from there, alone
        for (CompletableFuture<Buffer> later : pending) {
          Futures.release(later);
        }
        pending.clear();
        pendingLengths.clear();
        pendingStarts.clear();
        requested = at + got;
      }
      current = b;
      fill();
    } catch (IOException e) {
      if (!(e instanceof InterruptedIOException)) {
        broken = e;
      }
      throw e;
    }
  }

  /** True when stream byte {@code position} is the first of a partition. */
  private boolean startsPartition(long position) {
    return position < layout.total() && layout.start(layout.mapAt(position)) == position;
  }

  /** Issues reads until the window is full or the stream is all requested. */
  private void fill() throws IOException {
    long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
    while (pending.size() < window && requested < layout.total()) {
      SessionLayout.ReadSpan span = layout.spanAt(requested, chunk);
      Buffer req = pool.allocate(ReadRequest.BYTES);
      if (req == null) {
        if (!pending.isEmpty()) {
          return; // pool busy: the answers in flight free it
        }
        req = allocateWaiting(deadline);
      }
      new ReadRequest(session, span.map(), span.offset(), span.length()).encode(req.nio());
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
      pendingLengths.add(span.length());
      pendingStarts.add(requested);
      requested += span.length();
    }
  }

  private Buffer allocateWaiting(long deadline) throws IOException {
    long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
    try {
      return pool.allocate(ReadRequest.BYTES, left);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted waiting for transport memory");
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
      throw new InterruptedIOException("interrupted");
    }
  }
}
