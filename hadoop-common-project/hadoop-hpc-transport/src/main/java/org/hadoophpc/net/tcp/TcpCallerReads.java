/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: who reads a connection that leaves its reads to callers
 * ({@link org.hadoophpc.net.Connection#leaveReadsToCallers()}), and how a caller waits for bytes.
 *
 * <p>At most one caller reads at a time (others wait for its completions the usual way). It reads
 * what has arrived under the connection's lock, and when nothing has, waits on a selector of the
 * connection's own in which only this socket is registered: the kernel then wakes the waiting
 * thread itself, where the event loop would wake first and hand the frame over. The loop stops
 * watching the socket for reading and reads it only in its sweep, and only while no caller
 * reads, so what arrives while nobody waits (a DataNode's periodic empty answer, a reset) is
 * still handled within the sweep period. The selector is closed with the connection, by the
 * reading caller when one is inside (the socket is only released once every selector dropped it).
 */
final class TcpCallerReads {
  private static final Logger LOG = LoggerFactory.getLogger(TcpCallerReads.class);
  /** A starved or throttled connection is read again after this long, not in a busy loop. */
  private static final long RETRY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
  /**
   * A caller's read returns once it dispatched this many payload bytes (one data message, e.g.
   * an HDFS packet), so the caller copies them out while they are in its cache; small frames
   * (credits, acknowledgements) keep being read together.
   */
  private static final long CALLER_PAYLOAD_BUDGET = 32 * 1024;

  private final TcpConnection conn;
  private final SocketChannel channel;
  private final TcpWriteLock io;
  private final TcpInbound inbound;
  // Guarded by this.
  private Selector selector;
  private Thread reader;
  /** A wake-up came while no caller read: the next one does not wait. */
  private boolean wakePending;
  private boolean closed;

  TcpCallerReads(TcpConnection conn, SocketChannel channel, TcpWriteLock io,
      TcpInbound inbound) {
    this.conn = conn;
    this.channel = channel;
    this.io = io;
    this.inbound = inbound;
  }

  /** See {@link org.hadoophpc.net.Connection#leaveReadsToCallers()}. */
  boolean start() {
    io.lock();
    try {
      if (active()) {
        return true;
      }
      if (conn.finished() || !inbound.attached() || !openSelector()) {
        return false;
      }
      inbound.leaveToCallers();
      return true;
    } finally {
      io.unlock();
    }
  }

  /** Opens the selector callers wait on; false when the connection closed or it cannot. */
  private boolean openSelector() {
    Selector s;
    try {
      s = Selector.open();
    } catch (IOException e) {
      LOG.debug("no selector for caller reads of {}; the event loop keeps reading it",
          conn.peer(), e);
      return false;
    }
    synchronized (this) {
      if (!closed && selector == null) {
        try {
          channel.register(s, SelectionKey.OP_READ);
          selector = s;
          return true;
        } catch (IOException e) {
          LOG.debug("cannot watch {} for caller reads", conn.peer(), e);
        }
      }
    }
    closeQuietly(s);
    return false;
  }

  /**
   * Closes the connection on the calling thread, not waking the loop for it, when its reads are
   * left to callers (their completions run on callers' threads already) and its lock is free
   * (never waits for it); false, having done nothing, otherwise.
   */
  boolean closeOnCaller() {
    if (!active() || !io.tryLock()) {
      return false;
    }
    try {
      conn.closeLocally("closed locally");
    } finally {
      io.unlock();
    }
    return true;
  }

  /** Started and not closed. */
  synchronized boolean active() {
    return selector != null && !closed;
  }

  /** A caller is reading now (the sweep leaves the socket to it). */
  synchronized boolean reading() {
    return reader != null;
  }

  /** See {@link org.hadoophpc.net.Connection#readOnCaller(long)}. */
  boolean read(long timeoutNanos) {
    Selector s;
    long wait = timeoutNanos;
    synchronized (this) {
      if (selector == null || closed || reader != null) {
        return false;
      }
      reader = Thread.currentThread();
      s = selector;
      if (wakePending) {
        wakePending = false;
        wait = 0;
      }
    }
    try {
      int got = readNow();
      if (got != 0 || wait <= 0 || Thread.currentThread().isInterrupted()) {
        return true;
      }
      if (blocked()) {
        LockSupport.parkNanos(Math.min(wait, RETRY_NANOS));
      } else {
        s.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(wait)));
        s.selectedKeys().clear();
      }
      readNow();
      return true;
    } catch (IOException | RuntimeException e) {
      // a selector that failed (closed under us at close): the connection's close says why
      LOG.debug("waiting to read {} failed", conn.peer(), e);
      return true;
    } finally {
      synchronized (this) {
        reader = null;
        if (closed) {
          closeSelector();
        }
      }
    }
  }

  /**
   * Reads what has arrived, on the caller's thread: the complete frames dispatched, -1 when the
   * connection is closed. Waits for the lock, holding none a completion takes.
   */
  private int readNow() {
    io.lock();
    try {
      if (conn.finished()) {
        return -1;
      }
      unthrottle();
      inbound.unstarve(); // retried here, every millisecond while the pool stays exhausted
      long before = inbound.frames();
      try {
        inbound.onReadable(CALLER_PAYLOAD_BUDGET);
      } catch (IOException e) {
        conn.died(e);
        return -1;
      }
      return conn.finished() ? -1 : (int) (inbound.frames() - before);
    } finally {
      io.unlock();
    }
  }

  /** Reading waits for pool memory or for the handler's answers. */
  private boolean blocked() {
    io.lock();
    try {
      unthrottle();
      return inbound.blocked();
    } finally {
      io.unlock();
    }
  }

  /**
   * Under the lock: reading stopped at the limit of unanswered requests resumes once answers
   * went out (where the loop reads, it resumes when it sends them).
   */
  private void unthrottle() {
    if (inbound.throttled() && !conn.answersFull()) {
      inbound.unthrottle();
    }
  }

  /**
   * The loop's sweep, holding the lock: reads what arrived while no caller reads (an empty
   * answer, a reset); false when the connection broke.
   */
  boolean onSweep() {
    if (!active() || reading()) {
      return true;
    }
    try {
      inbound.unstarve();
      inbound.onReadable();
      return true;
    } catch (IOException e) {
      conn.died(e);
      return false;
    }
  }

  /** Makes a reading caller return soon. */
  synchronized void wakeup() {
    if (reader == null) {
      wakePending = true; // a caller about to read (the waker saw it decide to)
    } else if (selector != null) {
      selector.wakeup();
    }
  }

  /** The connection closed: releases the selector now, or when the reading caller leaves. */
  synchronized void close() {
    closed = true;
    if (reader == null) {
      closeSelector();
    } else if (selector != null) {
      selector.wakeup();
    }
  }

  private void closeSelector() {
    if (selector != null) {
      closeQuietly(selector);
      selector = null;
    }
  }

  private void closeQuietly(Selector s) {
    try {
      s.close();
    } catch (IOException e) {
      LOG.debug("closing the caller-read selector of {}", conn.peer(), e);
    }
  }
}
