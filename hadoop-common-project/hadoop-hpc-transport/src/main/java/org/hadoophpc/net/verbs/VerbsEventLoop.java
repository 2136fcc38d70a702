/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: only the verbs event thread touches the native context and the connections. This
 * class is that thread ({@code verbs-loop-<device>-<n>}, daemon) and what it owns: the table of
 * live connections (by id and by rdma_cm id), completion and rdma_cm polling with dispatch to
 * the connections, and shutdown.
 *
 * <p>Other threads hand it data-plane work through each connection's bounded outbox and the
 * ready queue ({@link #schedule}; no object per call), and control work through {@link #submit}
 * (a lock-free queue of tasks: set-up, close, unexpose), with an eventfd wakeup when the loop
 * sleeps. The loop blocks in {@code hpcn_verbs_wait} for at most {@value #LOOP_TICK_MS} ms so
 * timeouts are noticed without a timer thread. A RuntimeException out of one connection's
 * processing closes that connection (logged) and the loop goes on serving the others.
 */
final class VerbsEventLoop implements Runnable {
  /** The transport's logger: these lines read as they did when the loop was part of it. */
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);
  private static final int LOOP_TICK_MS = 20;
  private static final int WC_BATCH = 64;
  private static final int CM_BATCH = 16;
  /** Connections per transport: bits of a connection id that index {@link #connections}. */
  private static final int CONN_INDEX_BITS = 14;
  static final int MAX_CONNECTIONS = 1 << CONN_INDEX_BITS;
  private static final AtomicInteger LOOP_IDS = new AtomicInteger();

  private final VerbsTransport transport;
  private final long ctx;
  private final String deviceName;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  /** Connections with work in their outbox, each at most once (its {@code scheduled} flag). */
  private final ArrayBlockingQueue<VerbsConnection> ready =
      new ArrayBlockingQueue<>(MAX_CONNECTIONS);
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Set by the loop as it ends; later hand-overs are failed by the caller. */
  private volatile boolean terminated;
  private final Thread thread;

  // ---- loop-owned ----
  private final Map<Long, VerbsConnection> byCmId = new HashMap<>();
  /**
   * Live connections by the low bits of their id; the high bits are a generation, so that a
   * completion of a destroyed QP never reaches a newer connection in the same place.
   */
  private final VerbsConnection[] connections = new VerbsConnection[MAX_CONNECTIONS];
  private final int[] connectionGenerations = new int[MAX_CONNECTIONS];
  private int connectionCount;
  /** Indexes below this may be in use. */
  private int connectionHigh;
  private final ByteBuffer wcRecords;
  private final ByteBuffer cmRecords;
  private boolean stopping;
  private long stopDeadlineNanos;
  private volatile Throwable loopFailure;

  VerbsEventLoop(VerbsTransport transport, long ctx, String deviceName) {
    this.transport = transport;
    this.ctx = ctx;
    this.deviceName = deviceName;
    this.wcRecords = ByteBuffer.allocateDirect(WC_BATCH * VerbsNatives.WC_SIZE)
        .order(ByteOrder.nativeOrder());
    this.cmRecords = ByteBuffer.allocateDirect(CM_BATCH * VerbsNatives.CM_SIZE)
        .order(ByteOrder.nativeOrder());
    this.thread = new Thread(this, "verbs-loop-" + deviceName + "-"
        + LOOP_IDS.incrementAndGet());
    this.thread.setDaemon(true);
  }

  void start() {
    thread.start();
  }

  Thread thread() {
    return thread;
  }

  boolean inLoop() {
    return Thread.currentThread() == thread;
  }

  /** The transport is closed (or closing): no new work. */
  boolean isClosed() {
    return closed.get();
  }

  /** Loop: the transport is shutting down; new connections are refused. */
  boolean isStopping() {
    return stopping;
  }

  /** What ended the loop, or null. */
  Throwable failure() {
    return loopFailure;
  }

  // ======================================================================================
  // Hand-over (any thread)
  // ======================================================================================

  /** Hands work to the event loop; false when the transport is closed. */
  boolean submit(Runnable task) {
    if (closed.get() && !inLoop()) {
      return false;
    }
    tasks.add(task);
    wakeUp();
    return true;
  }

  /**
   * {@code c} has work in its outbox; any thread. After the loop has ended the caller fails
   * that work itself (the loop sets {@link #terminated} before its last look at the queue).
   */
  void schedule(VerbsConnection c) {
    if (c.outbox.scheduled.compareAndSet(false, true)) {
      if (!ready.offer(c)) {
        // Cannot happen: a connection is queued at most once and there are at most
        // MAX_CONNECTIONS; kept safe all the same.
        c.outbox.scheduled.set(false);
        if (!submit(c.outbox::drain)) {
          c.outbox.discard();
        }
        return;
      }
      wakeUp();
    }
    if (terminated) {
      c.outbox.discard();
    }
  }

  private void wakeUp() {
    if (sleeping.get()) {
      VerbsNatives.wake(ctx);
    }
  }

  <T> T callOnLoop(Callable<T> call, long timeoutMs) throws IOException {
    if (inLoop()) {
      try {
        return call.call();
      } catch (IOException | RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new TransportException("verbs event loop task failed", e);
      }
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    if (!submit(() -> {
      try {
        result.complete(call.call());
      } catch (Exception e) {
        result.completeExceptionally(e);
      }
    })) {
      throw new ConnectionClosedException("verbs transport is closed");
    }
    try {
      return result.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof IOException) {
        throw (IOException) cause;
      }
      if (cause instanceof RuntimeException) {
        throw (RuntimeException) cause;
      }
      throw new TransportException("verbs event loop task failed", cause);
    } catch (TimeoutException e) {
      throw new TransportTimeoutException("verbs event loop did not answer within "
          + timeoutMs + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TransportException("interrupted waiting for the verbs event loop", e);
    }
  }

  // ======================================================================================
  // Connections (loop)
  // ======================================================================================

  /** A free connection id (index and a new generation), or -1 when all are taken. */
  int nextConnId() {
    if (connectionCount >= MAX_CONNECTIONS) {
      return -1;
    }
    for (int i = 0; i < MAX_CONNECTIONS; i++) {
      if (connections[i] == null) {
        int generation = connectionGenerations[i] = (connectionGenerations[i] + 1)
            & ((1 << (31 - CONN_INDEX_BITS)) - 1);
        return (generation << CONN_INDEX_BITS) | i;
      }
    }
    return -1;
  }

  /** A new connection: its rdma_cm events and completions reach it from now on. */
  void add(VerbsConnection c) {
    byCmId.put(c.cmId, c);
    int i = c.connId & (MAX_CONNECTIONS - 1);
    connections[i] = c;
    connectionCount++;
    connectionHigh = Math.max(connectionHigh, i + 1);
  }

  /** The live connection of a completion's id, or null. */
  private VerbsConnection connection(int connId) {
    VerbsConnection c = connections[connId & (MAX_CONNECTIONS - 1)];
    return c != null && c.connId == connId ? c : null;
  }

  /** Calls {@code action} for every live connection (control work, not the data path). */
  void forEachConnection(Consumer<VerbsConnection> action) {
    for (int i = 0; i < connectionHigh; i++) {
      VerbsConnection c = connections[i];
      if (c != null) {
        action.accept(c);
      }
    }
  }

  void forget(VerbsConnection c) {
    byCmId.remove(c.cmId);
  }

  void removeConnection(VerbsConnection c) {
    int i = c.connId & (MAX_CONNECTIONS - 1);
    if (connections[i] == c) {
      connections[i] = null;
      connectionCount--;
      while (connectionHigh > 0 && connections[connectionHigh - 1] == null) {
        connectionHigh--;
      }
    }
  }

  // ======================================================================================
  // The loop
  // ======================================================================================

  @Override
  public void run() {
    long nextCheck = 0;
    try {
      while (true) {
        runTasks();
        processReady();
        drainCq();
        drainCm();
        for (int i = 0; i < connectionHigh; i++) {
          VerbsConnection c = connections[i];
          if (c != null) {
            try {
              c.maintain();
            } catch (RuntimeException e) {
              connectionFailed(c, e);
            }
          }
        }
        long now = System.nanoTime();
        if (now - nextCheck >= 0) {
          for (int i = 0; i < connectionHigh; i++) {
            VerbsConnection c = connections[i];
            if (c != null) {
              try {
                c.checkTimeouts(now);
              } catch (RuntimeException e) {
                connectionFailed(c, e);
              }
            }
          }
          nextCheck = now + TimeUnit.MILLISECONDS.toNanos(LOOP_TICK_MS);
        }
        if (stopping) {
          if (connectionCount == 0) {
            break;
          }
          if (now - stopDeadlineNanos > 0) {
            for (int i = 0; i < connectionHigh; i++) {
              VerbsConnection c = connections[i];
              if (c != null) {
                c.finish();
              }
            }
            break;
          }
        }
        sleeping.set(true);
        if (tasks.isEmpty() && ready.isEmpty()) {
          int rc = VerbsNatives.waitEvents(ctx, LOOP_TICK_MS);
          if (rc < 0) {
            throw new NativeIoException("hpcn_verbs_wait", -rc, "waiting for completions");
          }
        }
        sleeping.set(false);
      }
    } catch (Throwable t) {
      loopFailure = t;
      LOG.error("verbs event loop on {} failed; closing its connections", deviceName, t);
      for (int i = 0; i < connectionHigh; i++) {
        VerbsConnection c = connections[i];
        if (c != null) {
          c.closeConnection(new ConnectionClosedException("verbs event loop failed", t));
          c.finish();
        }
      }
    } finally {
      // Answers and operations handed over during shutdown find closed connections and are
      // released or failed; from now on callers do that themselves.
      terminated = true;
      runTasks();
      processReady();
    }
  }

  /**
   * A connection's processing threw: a bug, or a callback the guards missed. That connection is
   * closed; the loop carries on with the others.
   */
  private void connectionFailed(VerbsConnection c, RuntimeException e) {
    LOG.error("verbs: connection {} failed; closing it, the others go on", c, e);
    try {
      c.closeConnection(new ConnectionClosedException("verbs connection to "
          + c.remoteAddress() + " failed: " + e, e));
      c.finish();
    } catch (RuntimeException again) {
      e.addSuppressed(again);
      LOG.error("verbs: connection {} could not be torn down cleanly; dropping it", c, again);
      forget(c);
      removeConnection(c);
    }
  }

  private void runTasks() {
    Runnable task;
    while ((task = tasks.poll()) != null) {
      try {
        task.run();
      } catch (RuntimeException e) {
        // Tasks are this transport's own control work (set-up, close, unexpose); a failing one
        // must not take every connection down with the loop.
        LOG.error("verbs: an event-loop task failed on {}", deviceName, e);
      }
    }
  }

  private void processReady() {
    VerbsConnection c;
    while ((c = ready.poll()) != null) {
      try {
        c.outbox.drain();
      } catch (RuntimeException e) {
        connectionFailed(c, e);
      }
    }
  }

  private void drainCq() throws NativeIoException {
    int n;
    do {
      n = VerbsNatives.pollCq(ctx, wcRecords, WC_BATCH);
      if (n < 0) {
        throw new NativeIoException("ibv_poll_cq", -n, "polling the completion queue");
      }
      for (int i = 0; i < n; i++) {
        int at = i * VerbsNatives.WC_SIZE;
        long wrId = wcRecords.getLong(at + VerbsNatives.WC_WR_ID);
        VerbsConnection c = connection((int) (wrId >>> 32));
        if (c == null) {
          continue; // a completion of a QP already destroyed
        }
        try {
          c.onCompletion(wrId, wcRecords.getInt(at + VerbsNatives.WC_STATUS),
              wcRecords.getInt(at + VerbsNatives.WC_BYTE_LEN),
              wcRecords.getInt(at + VerbsNatives.WC_VENDOR_STATUS));
        } catch (RuntimeException e) {
          connectionFailed(c, e);
        }
      }
    } while (n == WC_BATCH);
  }

  private void drainCm() throws NativeIoException {
    int n;
    do {
      n = VerbsNatives.pollCm(ctx, cmRecords, CM_BATCH);
      if (n < 0) {
        throw new NativeIoException("rdma_get_cm_event", -n, "reading rdma_cm events");
      }
      for (int i = 0; i < n; i++) {
        int at = i * VerbsNatives.CM_SIZE;
        long id = cmRecords.getLong(at + VerbsNatives.CM_ID);
        int type = cmRecords.getInt(at + VerbsNatives.CM_TYPE);
        int status = cmRecords.getInt(at + VerbsNatives.CM_STATUS);
        if (type == VerbsNatives.CM_CONNECT_REQUEST) {
          transport.onConnectRequest(id, cmRecords.getLong(at + VerbsNatives.CM_LISTEN_ID),
              cmRecords, at);
          continue;
        }
        VerbsConnection c = byCmId.get(id);
        if (c != null) {
          try {
            c.setUp.onCmEvent(type, status, cmRecords, at);
          } catch (RuntimeException e) {
            connectionFailed(c, e);
          }
        }
      }
    } while (n == CM_BATCH);
  }

  // ======================================================================================
  // Shutdown
  // ======================================================================================

  /**
   * Starts shutdown once (false when already begun): the loop stops taking connections, runs
   * {@code onStop} (the transport's listeners go), closes every connection and ends when they
   * are finished or after {@code graceMs}.
   */
  boolean shutDown(Runnable onStop, long graceMs) {
    if (!closed.compareAndSet(false, true)) {
      return false;
    }
    tasks.add(() -> {
      stopping = true;
      stopDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMs);
      onStop.run();
      forEachConnection(c -> c.closeConnection(
          new ConnectionClosedException("verbs transport closed")));
    });
    VerbsNatives.wake(ctx);
    return true;
  }

  /** Waits up to {@code millis} for the thread to end. */
  void join(long millis) throws InterruptedException {
    thread.join(millis);
  }
}
