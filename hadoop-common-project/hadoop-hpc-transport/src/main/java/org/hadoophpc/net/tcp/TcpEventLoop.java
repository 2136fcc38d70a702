/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One event thread ({@code hpc-tcp-<n>}, daemon) with its {@link Selector} and the connections
 * it owns: it does all their socket I/O, runs request handlers and completes futures.
 *
 * <p>Other threads talk to it through two bounded queues followed by {@link Selector#wakeup()}
 * (only when the loop sleeps or is about to): {@link #ready} names connections with frames in
 * their outbox (each connection at most once, so it cannot overflow with at most
 * {@link #MAX_CONNECTIONS} connections), {@link #tasks} carries rare control work (registering
 * a channel). Deadlines are swept each turn at least every {@link #sweepNanos}; a connection
 * starved of pool memory is retried every millisecond. Every call into a connection is made
 * holding that connection's {@link TcpWriteLock} (a caller may be writing to it).
 */
final class TcpEventLoop implements Runnable {
  private static final Logger LOG = LoggerFactory.getLogger(TcpEventLoop.class);
  private static final AtomicInteger THREAD_NUMBERS = new AtomicInteger();
  /** Connections one loop serves; bounds its ready queue. */
  static final int MAX_CONNECTIONS = 8192;
  private static final int MAX_TASKS = 1024;

  private final TcpTransport transport;
  private final Selector selector;
  private final Thread thread;
  private final ArrayBlockingQueue<TcpConnection> ready =
      new ArrayBlockingQueue<>(2 * MAX_CONNECTIONS);
  private final ArrayBlockingQueue<Runnable> tasks = new ArrayBlockingQueue<>(MAX_TASKS);
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final Consumer<SelectionKey> onKey = this::processKey;
  private final long sweepNanos;
  private volatile boolean shutdown;
  private volatile boolean terminated;

  // Loop-thread state.
  private final ArrayList<TcpConnection> connections = new ArrayList<>();
  private final ArrayList<TcpConnector.PendingConnect> connects = new ArrayList<>();
  private final ArrayDeque<TcpConnection> starved = new ArrayDeque<>();
  private long nextSweep;

  TcpEventLoop(TcpTransport transport, long sweepNanos) throws IOException {
    this.transport = transport;
    this.sweepNanos = sweepNanos;
    this.selector = Selector.open();
    this.thread = new Thread(this, "hpc-tcp-" + THREAD_NUMBERS.getAndIncrement());
    thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  Thread thread() {
    return thread;
  }

  Selector selector() {
    return selector;
  }

  TcpTransport transport() {
    return transport;
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  boolean isShutdown() {
    return shutdown;
  }

  /** A connection has work in its outbox (or was closed); any thread. */
  void ready(TcpConnection c) {
    if (!ready.offer(c)) {
      throw new IllegalStateException("ready queue of " + thread.getName() + " overflowed");
    }
    wakeup();
    if (terminated) {
      c.failOutbox("transport closed", null);
    }
  }

  /** Runs {@code task} on the loop; false when the loop is gone or its queue is full. */
  boolean execute(Runnable task) {
    if (shutdown || !tasks.offer(task)) {
      return false;
    }
    wakeup();
    if (terminated) {
      runTasks();
    }
    return true;
  }

  /**
   * Runs {@code task} on the loop at its next turn without waking it (within the sweep period
   * at the latest, sooner when anything else wakes it, or once the queue is half full): for
   * bookkeeping nobody waits for. False when the loop is gone or its queue is full.
   */
  boolean executeLazily(Runnable task) {
    if (shutdown || !tasks.offer(task)) {
      return false;
    }
    if (tasks.size() >= MAX_TASKS / 2) {
      wakeup(); // a burst of lazy tasks (connects on callers' threads) must not fill the queue
    }
    if (terminated) {
      runTasks();
    }
    return true;
  }

  private void wakeup() {
    if (sleeping.compareAndSet(true, false)) {
      selector.wakeup();
    }
  }

  /** Starts shutting down; the loop closes its connections and exits. Any thread. */
  void shutdown() {
    shutdown = true;
    selector.wakeup();
  }

  /** Waits up to {@code millis} for the thread to finish; true if it did (or is the caller). */
  boolean awaitTermination(long millis) throws InterruptedException {
    if (inLoop()) {
      return true;
    }
    thread.join(millis);
    return !thread.isAlive();
  }

  void adopt(TcpConnection c) {
    connections.add(c);
  }

  void forget(TcpConnection c) {
    connections.remove(c);
  }

  int connectionCount() {
    return connections.size();
  }

  void connecting(TcpConnector.PendingConnect p) {
    connects.add(p);
  }

  void connected(TcpConnector.PendingConnect p) {
    connects.remove(p);
  }

  void starved(TcpConnection c) {
    starved.add(c);
  }

  @Override
  public void run() {
    Throwable failure = null;
    try {
      nextSweep = System.nanoTime() + sweepNanos;
      while (!shutdown) {
        long waitMs = starved.isEmpty()
            ? Math.max(1, TimeUnit.NANOSECONDS.toMillis(nextSweep - System.nanoTime())) : 1;
        sleeping.set(true);
        if (ready.isEmpty() && tasks.isEmpty() && !shutdown) {
          selector.select(onKey, waitMs);
        } else {
          selector.selectNow(onKey);
        }
        sleeping.set(false);
        runTasks();
        processReady();
        retryStarved();
        long now = System.nanoTime();
        if (now - nextSweep >= 0) {
          sweep(now);
          nextSweep = now + sweepNanos;
        }
      }
    } catch (IOException | RuntimeException | Error e) {
      failure = e;
      LOG.error("event loop {} failed; closing its connections", thread.getName(), e);
    } finally {
      terminate(failure);
    }
  }

  private void processKey(SelectionKey k) {
    if (!k.isValid()) {
      return;
    }
    Object a = k.attachment();
    if (a instanceof TcpConnection c) {
      TcpWriteLock io = c.io();
      io.lock();
      try {
        c.onReady(k.readyOps());
      } finally {
        io.unlock();
      }
    } else if (a instanceof TcpListener l) {
      l.acceptReady();
    } else if (a instanceof TcpConnector.PendingConnect p) {
      p.finish();
    }
  }

  private void runTasks() {
    Runnable t;
    while ((t = tasks.poll()) != null) {
      t.run();
    }
  }

  private void processReady() {
    TcpConnection c;
    while ((c = ready.poll()) != null) {
      TcpWriteLock io = c.io();
      io.lock();
      try {
        c.onScheduled();
      } finally {
        io.unlock();
      }
    }
  }

  private void retryStarved() {
    for (int n = starved.size(); n > 0; n--) {
      TcpConnection c = starved.poll();
      c.io().lock();
      try {
        c.retryRead();
      } finally {
        c.io().unlock();
      }
    }
  }

  private void sweep(long now) {
    for (int i = connections.size() - 1; i >= 0; i--) {
      if (i < connections.size()) {
        TcpConnection c = connections.get(i);
        boolean gone;
        c.io().lock();
        try {
          gone = c.finished();
          if (!gone) {
            c.sweep(now);
          }
        } finally {
          c.io().unlock();
        }
        if (gone) {
          connections.remove(i); // closed by a caller reading it (TcpCallerReads)
        }
      }
    }
    for (int i = connects.size() - 1; i >= 0; i--) {
      if (i < connects.size()) {
        connects.get(i).sweep(now);
      }
    }
  }

  private void terminate(Throwable failure) {
    String reason = failure == null ? "transport closed" : "event loop failed: " + failure;
    try {
      for (int i = connections.size() - 1; i >= 0; i--) {
        if (i < connections.size()) {
          connections.get(i).closeLocally(reason);
        }
      }
      for (int i = connects.size() - 1; i >= 0; i--) {
        connects.get(i).abort(reason);
      }
      connects.clear();
    } finally {
      shutdown = true;
      terminated = true;
      runTasks();
      TcpConnection c;
      while ((c = ready.poll()) != null) {
        c.failOutbox(reason, failure);
      }
      try {
        selector.close();
      } catch (IOException e) {
        LOG.debug("closing the selector of {}", thread.getName(), e);
      }
    }
  }
}
