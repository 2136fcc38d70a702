/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;

/**
 * One end of a byte stream over a transport {@link Connection}: the bytes that arrived and wait
 * to be read, end of stream, and the readiness the channel's selectors wait on. Reads and writes
 * never block: {@link TransferChannel} and Hadoop's {@code SocketIOWithTimeout} do the waiting,
 * with Hadoop's own timeouts. All state is guarded by {@code this}.
 */
abstract class Pipe {
  protected final Connection connection;
  /** Arrived bytes: each a view of a message, which is released with its last view. */
  private final ArrayDeque<Segment> inbound = new ArrayDeque<>();
  private boolean eof;
  private IOException failure;
  protected boolean closed;
  private volatile Runnable signal = () -> { };
  protected final TransferMetrics metrics;

  Pipe(Connection connection, TransferMetrics metrics) {
    this.connection = connection;
    this.metrics = metrics;
  }

  InetSocketAddress remoteAddress() {
    return connection.remoteAddress();
  }

  /** Called with no lock held whenever this pipe may have become readable or writable. */
  void onReadiness(Runnable r) {
    signal = r;
  }

  protected final void signal() {
    signal.run();
  }

  /**
   * Reads the connection on this thread, waiting up to {@code timeoutNanos}, where its reads are
   * left to callers; false when another thread reads it or the transport's thread does.
   */
  boolean readOnCaller(long timeoutNanos) {
    return connection.readOnCaller(timeoutNanos);
  }

  /** Makes a thread inside {@link #readOnCaller(long)} return soon. */
  void wakeReader() {
    connection.wakeReader();
  }

  /**
   * Copies waiting bytes into {@code dst}: the count, 0 when nothing has arrived yet, -1 at the
   * end of the stream.
   */
  int read(ByteBuffer dst) throws IOException {
    int n = 0;
    int consumed = 0;
    synchronized (this) {
      if (closed) {
        throw new IOException("read from a closed transfer stream to " + remoteAddress());
      }
      while (dst.hasRemaining() && !inbound.isEmpty()) {
        Segment head = inbound.peek();
        ByteBuffer src = head.view;
        int k = Math.min(src.remaining(), dst.remaining());
        int limit = src.limit();
        src.limit(src.position() + k);
        dst.put(src);
        src.limit(limit);
        n += k;
        if (!src.hasRemaining()) {
          inbound.poll().owner.release();
          if (head.endsMessage) {
            consumed++;
          }
        }
      }
      if (n == 0) {
        if (failure != null && !eof) {
          throw new IOException(failure.getMessage(), failure);
        }
        if (eof) {
          return -1;
        }
      }
    }
    if (n == 0 && dst.hasRemaining()) {
      drained();
      return 0;
    }
    metrics.bytesIn(n);
    if (consumed > 0) {
      consumed(consumed);
    }
    return n;
  }

  /** Sends what fits of {@code src} now: the count, 0 when the stream has no room. */
  abstract int write(ByteBuffer src) throws IOException;

  abstract boolean writable();

  synchronized boolean readable() {
    return !inbound.isEmpty() || eof || failure != null || closed;
  }

  /** A reader found nothing to read: it is about to wait for the peer. */
  protected void drained() {
  }

  /** {@code n} arrived messages were read to their end. */
  protected void consumed(int n) {
  }

  /** Queues an arrived message (from its position on); false when this end is closed. */
  protected boolean arrived(Buffer b) {
    synchronized (this) {
      if (closed || eof) {
        b.release();
        return false;
      }
      if (b.nio().hasRemaining()) {
        inbound.add(new Segment(b, b.nio(), true));
      } else {
        b.release();
      }
    }
    signal();
    return true;
  }

  /**
   * Queues one arrived message as several views of it, read in their order (each view holds
   * one reference of {@code owner}, which this call takes over); false when this end is closed.
   * Empty views are dropped; the message counts as read once its last view is. At least one
   * view must have bytes.
   */
  protected boolean arrived(Buffer owner, ByteBuffer[] views) {
    int last = views.length - 1;
    while (last > 0 && !views[last].hasRemaining()) {
      last--;
    }
    synchronized (this) {
      if (closed || eof) {
        for (int i = 0; i < views.length; i++) {
          owner.release();
        }
        return false;
      }
      for (int i = 0; i < views.length; i++) {
        if (i == last || (i < last && views[i].hasRemaining())) {
          inbound.add(new Segment(owner, views[i], i == last));
        } else {
          owner.release();
        }
      }
    }
    signal();
    return true;
  }

  /** Part of an arrived message. */
  private static final class Segment {
    final Buffer owner;
    final ByteBuffer view;
    final boolean endsMessage;

    Segment(Buffer owner, ByteBuffer view, boolean endsMessage) {
      this.owner = owner;
      this.view = view;
      this.endsMessage = endsMessage;
    }
  }

  protected synchronized int queued() {
    return inbound.size();
  }

  /** The peer ended the stream cleanly: readers see end of stream after the queued bytes. */
  protected void ended() {
    synchronized (this) {
      eof = true;
    }
    signal();
  }

  /** The connection broke: readers see the queued bytes, then {@code cause}. */
  protected void broken(IOException cause) {
    synchronized (this) {
      if (failure == null) {
        failure = cause;
      }
    }
    signal();
  }

  protected synchronized IOException failure() {
    return failure;
  }

  protected synchronized boolean isEnded() {
    return eof;
  }

  /** Closes this end; queued bytes are dropped. */
  void close() {
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      while (!inbound.isEmpty()) {
        inbound.poll().owner.release();
      }
    }
    closeConnection();
    signal();
  }

  synchronized boolean isClosed() {
    return closed;
  }

  protected abstract void closeConnection();
}
