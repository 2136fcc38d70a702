/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.nativeio.RdmaDevice;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RegisteredMemory;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA transport: RC queue pairs set up by rdma_cm on one device, two-sided messages by
 * SEND/RECV with credit-based flow control and rendezvous for large payloads (see
 * {@link VerbsConnection} and {@link VerbsHeader}), one-sided reads and writes by RDMA READ and
 * WRITE of peers' {@link RemoteRegion}s.
 *
 * <p>Threading: one event-loop thread owns the native context (CQ, event channel) and every
 * connection and listener. Other threads hand it data-plane work through each connection's
 * bounded outbox and this transport's ready queue ({@link #schedule}; no object per call), and
 * control work through {@link #submit} (a lock-free queue of tasks: set-up, close, unexpose),
 * with an eventfd wakeup when the loop sleeps. The loop blocks in {@code hpcn_verbs_wait} for at
 * most {@value #LOOP_TICK_MS} ms so timeouts are noticed without a timer thread. A
 * RuntimeException out of one connection's processing closes that connection (logged) and the
 * loop goes on serving the others.
 * {@code hadoop.hpc.transport.io.threads} is not used: one loop per transport (open more
 * transports for more cores).
 *
 * <p>Memory: the {@link BufferPool} registers each slab once ({@code ibv_reg_mr}) for local
 * access and memory-window binding only: a slab's rkey opens nothing to a peer. Remote access
 * is granted per transfer or per region, never per slab: a rendezvous payload through a type 2
 * memory window bound to exactly its bytes, on one connection's QP, until the transfer is over
 * ({@link VerbsWindows}); a region the application exposes through a registration of its own
 * covering exactly that region, with remote read and write, from {@link #expose} until
 * {@link #unexpose} deregisters it. Addresses and lkeys of a buffer come from its slab.
 * It is the only registered memory: each connection's receive ring (header slots and one
 * {@link #EAGER_SIZE} payload per receive) is made of pool chunks too, so
 * {@code hadoop.hpc.transport.buffer.pool.max} bounds everything pinned. Rings together may take
 * at most a quarter of the pool ({@link #reserveRing}): a new connection gets the configured
 * receive depth, a smaller one when the rings' share is nearly used up, and fails naming the key
 * when not even {@value #MIN_RECV_DEPTH} receives fit; the rest of the pool stays for messages.
 * {@link #expose} hands out the region registration's rkey (low half of the region key; the
 * high half is an exposure id). {@link #unexpose} first tells every connected peer, which then
 * fails later one-sided operations on that region before posting them (an RC queue pair does
 * not survive a remote access error), waits for their acknowledgements, then deregisters the
 * region: a peer that ignores the protocol gets a remote access error and loses its
 * connection, never the memory. Devices without type 2 memory windows are refused at
 * {@link #open} (the factory falls back to tcp with the reason).
 *
 * <p>Thread-safe.
 */
public final class VerbsTransport implements Transport {
  private static final Logger LOG = LoggerFactory.getLogger(VerbsTransport.class);

  /**
   * Largest payload sent inline with its header; larger ones go by rendezvous. Receive slots are
   * pool chunks of this size, hence {@link TransportConf#MIN_MAX_MESSAGE_SIZE}.
   */
  static final int EAGER_SIZE = TransportConf.MIN_MAX_MESSAGE_SIZE;
  /** Teardown waits this long for flush completions before destroying a QP regardless. */
  static final long CLOSE_GRACE_MS = 2000;
  private static final int LOOP_TICK_MS = 20;
  private static final int CQ_INITIAL = 1024;
  private static final int WC_BATCH = 64;
  private static final int CM_BATCH = 16;
  private static final int LISTEN_BACKLOG = 128;
  private static final int MAX_RECV_DEPTH = 32;
  /**
   * The fewest receives a connection gets. Credits come back on the peer's messages, or in a
   * CREDIT message once half the window ({@link VerbsCredits#threshold}, at least 2) is
   * owed; a CREDIT takes a receive and so is owed back itself. With fewer than 4 receives half
   * the window is 1: every CREDIT would answer a CREDIT, two idle peers would bounce them
   * forever, and a side holding one credit would keep spending it on a CREDIT instead of its
   * data (seen as a request that never left, with 2 receives).
   */
  static final int MIN_RECV_DEPTH = 4;
  /** Connections per transport: bits of a connection id that index {@link #connections}. */
  private static final int CONN_INDEX_BITS = 14;
  static final int MAX_CONNECTIONS = 1 << CONN_INDEX_BITS;
  private static final AtomicInteger LOOP_IDS = new AtomicInteger();

  /** Handle, address and keys of one registered slab. */
  record MrInfo(long handle, long addr, int lkey, int rkey) {
  }

  /** A region registered for remote access by {@link #expose}, until {@link #unexpose}. */
  private record Exposure(long handle) {
  }

  private final TransportConf conf;
  private final RdmaDevice device;
  private final int devicePort;
  private final long ctx;
  private final BufferPool pool;
  private final Map<Long, MrInfo> registrations = new ConcurrentHashMap<>();
  private final Map<Long, Revocation> revocations = new ConcurrentHashMap<>();
  private final Map<Long, Exposure> exposuresByKey = new ConcurrentHashMap<>();
  private final AtomicLong exposures = new AtomicLong();
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
  /** Connections with work in their outbox, each at most once (its {@code scheduled} flag). */
  private final ArrayBlockingQueue<VerbsConnection> ready =
      new ArrayBlockingQueue<>(MAX_CONNECTIONS);
  private final AtomicBoolean sleeping = new AtomicBoolean();
  private final AtomicBoolean closed = new AtomicBoolean();
  /** Set by the loop as it ends; later hand-overs are failed by the caller. */
  private volatile boolean terminated;
  private final Thread loop;
  private final int recvDepth;
  /** Ring bytes connections may hold together: a quarter of the pool. */
  private final long ringBudget;
  /** Ring bytes connections hold now; written by the loop only. */
  private volatile long ringBytesInUse;

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
  private final Map<Long, VerbsListener> listeners = new HashMap<>();
  private final ByteBuffer wcRecords;
  private final ByteBuffer cmRecords;
  private int cqCommitted;
  private boolean stopping;
  private long stopDeadlineNanos;
  private volatile Throwable loopFailure;

  private VerbsTransport(TransportConf conf, RdmaDevice device, int devicePort, long ctx) {
    this.conf = conf;
    this.device = device;
    this.devicePort = devicePort;
    this.ctx = ctx;
    this.recvDepth = Math.max(4, Math.min(conf.maxInflight(), MAX_RECV_DEPTH));
    this.ringBudget = conf.bufferPoolMax() / 4;
    this.wcRecords = ByteBuffer.allocateDirect(WC_BATCH * VerbsNatives.WC_SIZE)
        .order(ByteOrder.nativeOrder());
    this.cmRecords = ByteBuffer.allocateDirect(CM_BATCH * VerbsNatives.CM_SIZE)
        .order(ByteOrder.nativeOrder());
    this.pool = conf.newBufferPool(new Registrar());
    this.loop = new Thread(this::runLoop, "verbs-loop-" + device.name() + "-"
        + LOOP_IDS.incrementAndGet());
    this.loop.setDaemon(true);
  }

  /**
   * Opens a verbs transport on {@code device} (as chosen by {@code TransportSelector}).
   *
   * @param port the device port TransportSelector chose; rdma_cm routes by IP address, so it
   *             is recorded for diagnostics only
   * @throws NativeIoException when libhpcnative is unavailable or the device cannot be opened
   */
  public static VerbsTransport open(TransportConf conf, RdmaDevice device, int port)
      throws IOException {
    Objects.requireNonNull(conf, "conf");
    Objects.requireNonNull(device, "device");
    checkPoolHoldsARing(conf);
    HpcNative.ensureAvailable();
    VerbsNatives.bind();
    long ctx = VerbsNatives.open(device.name(), CQ_INITIAL);
    if (!VerbsNatives.hasWindows(ctx)) {
      TransportException e = new TransportException("verbs device " + device.name() + " has no"
          + " type 2 memory windows, which this transport needs to open to a peer only the bytes"
          + " of one transfer");
      try {
        VerbsNatives.close(ctx);
      } catch (NativeIoException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    VerbsTransport t;
    try {
      t = new VerbsTransport(conf, device, port, ctx);
    } catch (RuntimeException | Error e) {
      try {
        VerbsNatives.close(ctx);
      } catch (NativeIoException suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
    t.loop.start();
    return t;
  }

  private final class Registrar implements BufferPool.MemoryRegistrar {
    @Override
    public long register(ByteBuffer slab) throws IOException {
      long[] info = new long[3];
      long handle = VerbsNatives.regMr(ctx, slab, 0, slab.capacity(), VerbsNatives.ACCESS_WINDOWS,
          info);
      registrations.put(handle, new MrInfo(handle, info[0], (int) info[1], (int) info[2]));
      return handle;
    }

    @Override
    public Object details(long handle) {
      return registrations.get(handle);
    }

    @Override
    public void deregister(long handle) throws IOException {
      registrations.remove(handle);
      VerbsNatives.deregMr(ctx, handle);
    }
  }

  // ======================================================================================
  // Transport
  // ======================================================================================

  @Override
  public String name() {
    return "verbs";
  }

  @Override
  public BufferPool bufferPool() {
    return pool;
  }

  @Override
  public RegisteredMemory registeredMemory() {
    return new RegisteredMemory(pool.reservedBytes(), pool.usedBytes(), ringBytesInUse,
        pool.maxBytes());
  }

  TransportConf conf() {
    return conf;
  }

  /** The event thread, e.g. for a benchmark measuring its allocation. */
  public Thread[] eventThreads() {
    return new Thread[] {loop};
  }

  long ctx() {
    return ctx;
  }

  /** The receive depth connections get while the rings' budget allows. */
  int recvDepth() {
    return recvDepth;
  }

  /**
   * Send queue depth of a connection: requests and one-sided ops (max.inflight), answers and
   * acks to the peer's operations (its window, at most our receive depth), rendezvous reads,
   * and credit messages.
   */
  static int sendDepth(int maxInflight, int recvDepth) {
    return 2 * maxInflight + 2 * recvDepth + 8;
  }

  /** Pool chunks holding a connection's header slots (receive, then send). */
  static int headerChunks(int maxInflight, int recvDepth) {
    int headers = recvDepth + sendDepth(maxInflight, recvDepth);
    return (headers + VerbsConnection.HEADERS_PER_CHUNK - 1) / VerbsConnection.HEADERS_PER_CHUNK;
  }

  /** Pool bytes of a connection's receive ring: header chunks and a payload per receive. */
  static long ringBytes(int maxInflight, int recvDepth) {
    return (long) (headerChunks(maxInflight, recvDepth) + recvDepth) * EAGER_SIZE;
  }

  /**
   * Fails unless the rings' quarter of the pool holds at least one ring of
   * {@value #MIN_RECV_DEPTH} receives: a configuration error, named, not a fallback to tcp.
   */
  static void checkPoolHoldsARing(TransportConf conf) {
    long smallest = ringBytes(conf.maxInflight(), MIN_RECV_DEPTH);
    if (conf.bufferPoolMax() / 4 < smallest) {
      throw new IllegalArgumentException("hadoop.hpc.transport.buffer.pool.max="
          + conf.bufferPoolMax() + " is too small for verbs: receive rings may use a quarter of"
          + " it, less than the smallest ring (" + smallest + " bytes); raise it to at least "
          + 4 * smallest);
    }
  }

  /** The ring of a connection of a fresh transport configured by {@code conf} (tests). */
  static long ringBytes(TransportConf conf) {
    int wanted = Math.max(4, Math.min(conf.maxInflight(), MAX_RECV_DEPTH));
    long budget = conf.bufferPoolMax() / 4;
    for (int d = wanted; d >= MIN_RECV_DEPTH; d--) {
      if (ringBytes(conf.maxInflight(), d) <= budget) {
        return ringBytes(conf.maxInflight(), d);
      }
    }
    return 0;
  }

  /**
   * Loop: reserves the ring of a new connection within the rings' budget and returns its
   * receive depth: the configured one, or the largest that still fits.
   *
   * @throws TransportException naming {@code hadoop.hpc.transport.buffer.pool.max} when not
   *         even a ring of {@value #MIN_RECV_DEPTH} receives fits
   */
  int reserveRing(InetSocketAddress peer) throws TransportException {
    for (int d = recvDepth; d >= MIN_RECV_DEPTH; d--) {
      long bytes = ringBytes(conf.maxInflight(), d);
      if (ringBytesInUse + bytes <= ringBudget) {
        ringBytesInUse += bytes;
        return d;
      }
    }
    throw new TransportException("verbs connection to " + peer + ": receive rings already hold "
        + ringBytesInUse + " of the " + ringBudget + " bytes they may use (a quarter of"
        + " hadoop.hpc.transport.buffer.pool.max=" + conf.bufferPoolMax() + "); raise it or use"
        + " fewer connections");
  }

  /** Loop: a connection's ring went back to the pool. */
  void releaseRing(long bytes) {
    ringBytesInUse -= bytes;
  }

  int stepTimeoutMs() {
    return (int) Math.min(Integer.MAX_VALUE, Math.max(1, conf.connectTimeoutMs()));
  }

  @Override
  public Listener listen(InetSocketAddress address, RequestHandler handler) throws IOException {
    Objects.requireNonNull(handler, "handler");
    InetAddress ip = resolved(address);
    return callOnLoop(() -> {
      long id;
      try {
        id = VerbsNatives.listen(ctx, ip.getAddress(), address.getPort(), LISTEN_BACKLOG);
      } catch (NativeIoException e) {
        throw new TransportException("verbs listen on " + address + " (device "
            + device.name() + "): " + e.getMessage(), e);
      }
      int port = VerbsNatives.localPort(id);
      VerbsListener l = new VerbsListener(this, id, new InetSocketAddress(ip,
          port > 0 ? port : address.getPort()), handler);
      listeners.put(id, l);
      return l;
    });
  }

  private static InetAddress resolved(InetSocketAddress address) throws TransportException {
    if (address == null || address.isUnresolved()) {
      throw new TransportException("cannot use unresolved address " + address);
    }
    return address.getAddress();
  }

  @Override
  public CompletableFuture<Connection> connect(InetSocketAddress address) {
    CompletableFuture<Connection> future = new CompletableFuture<>();
    InetAddress ip;
    try {
      ip = resolved(address);
    } catch (TransportException e) {
      future.completeExceptionally(e);
      return future;
    }
    if (!submit(() -> startConnect(address, ip, future))) {
      future.completeExceptionally(new ConnectionClosedException("verbs transport is closed"));
    }
    return future;
  }

  private void startConnect(InetSocketAddress address, InetAddress ip,
      CompletableFuture<Connection> future) {
    if (stopping) {
      future.completeExceptionally(new ConnectionClosedException("verbs transport is closed"));
      return;
    }
    int connId = nextConnId();
    if (connId < 0) {
      future.completeExceptionally(new TransportException("verbs connect to " + address
          + ": this transport already has " + MAX_CONNECTIONS + " connections"));
      return;
    }
    long id;
    try {
      id = VerbsNatives.connectStart(ctx, ip.getAddress(), address.getPort(), stepTimeoutMs());
    } catch (NativeIoException e) {
      future.completeExceptionally(new TransportException("verbs connect to " + address + ": "
          + e.getMessage(), e));
      return;
    }
    VerbsConnection c = new VerbsConnection(this, connId, id, null, address);
    c.connectFuture = future;
    c.connectDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
        conf.connectTimeoutMs());
    byCmId.put(id, c);
    addConnection(c);
  }

  /** A free connection id (index and a new generation), or -1 when all are taken. */
  private int nextConnId() {
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

  private void addConnection(VerbsConnection c) {
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

  @Override
  public RemoteRegion expose(Buffer buffer) throws IOException {
    if (closed.get()) {
      throw new ConnectionClosedException("verbs transport is closed");
    }
    mr(buffer); // only this pool's memory
    // A registration of exactly this region: its rkey opens nothing else of the slab.
    long[] info = new long[3];
    long handle = VerbsNatives.regMr(ctx, buffer.slabMemory(), buffer.slabOffset(),
        buffer.capacity(), VerbsNatives.ACCESS_REMOTE_READ | VerbsNatives.ACCESS_REMOTE_WRITE,
        info);
    // Upper half: an exposure id, so a re-exposed buffer is not hit by an old revocation.
    long key = ((long) exposures.incrementAndGet() << 32) | (info[2] & 0xffff_ffffL);
    exposuresByKey.put(key, new Exposure(handle));
    return new RemoteRegion(info[0], buffer.capacity(), key);
  }

  /**
   * Revokes the region at every connected peer and waits (up to the io timeout) for each to
   * confirm, so operations a peer starts after this returns fail; then deregisters the region,
   * so even a peer ignoring the revocation cannot reach it any more.
   */
  @Override
  public void unexpose(RemoteRegion region) {
    if (closed.get()) {
      return; // close() deregisters what is still exposed
    }
    long key = region.key();
    Exposure exposure = exposuresByKey.remove(key);
    if (exposure == null) {
      return; // not exposed here, or unexposed already
    }
    try {
      revokeAtPeers(key, region);
    } finally {
      deregisterExposure(exposure);
    }
  }

  private void deregisterExposure(Exposure exposure) {
    try {
      VerbsNatives.deregMr(ctx, exposure.handle());
    } catch (NativeIoException e) {
      LOG.warn("verbs: deregistering an exposed region on {} failed: {}", device.name(),
          e.getMessage());
    }
  }

  private void revokeAtPeers(long key, RemoteRegion region) {
    if (closed.get()) {
      return;
    }
    AtomicInteger pending = new AtomicInteger(1);
    CountDownLatch acked = new CountDownLatch(1);
    revocations.put(key, new Revocation(pending, acked));
    boolean submitted = submit(() -> {
      for (int i = 0; i < connectionHigh; i++) {
        VerbsConnection c = connections[i];
        if (c != null && c.revoke(key)) {
          pending.incrementAndGet();
        }
      }
      if (pending.decrementAndGet() == 0) {
        acked.countDown();
      }
    });
    try {
      if (submitted && Thread.currentThread() != loop) {
        if (!acked.await(conf.ioTimeoutMs(), TimeUnit.MILLISECONDS)) {
          LOG.warn("verbs: not every peer confirmed unexposing {} within {} ms", region,
              conf.ioTimeoutMs());
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      revocations.remove(key);
    }
  }

  private record Revocation(AtomicInteger pending, CountDownLatch acked) {
  }

  void revokeAcknowledged(long key) {
    Revocation r = revocations.get(key);
    if (r != null && r.pending().decrementAndGet() == 0) {
      r.acked().countDown();
    }
  }

  /** The registration of a buffer of this transport's pool. */
  MrInfo mr(Buffer buffer) {
    MrInfo mr = buffer.pool() == pool ? (MrInfo) buffer.slabDetails() : null;
    if (mr == null) {
      throw new IllegalArgumentException("buffer is not registered memory of this verbs "
          + "transport's pool: " + buffer);
    }
    return mr;
  }

  /** A pool copy of a foreign buffer's readable bytes, or null when the pool is exhausted. */
  Buffer copyIntoPool(Buffer foreign) {
    int n = foreign.readableBytes();
    Buffer copy = pool.allocate(n);
    if (copy != null) {
      copy.nio().put(foreign.nio().duplicate()).flip();
    }
    return copy;
  }

  // ======================================================================================
  // Event loop
  // ======================================================================================

  /** Hands work to the event loop; false when the transport is closed. */
  boolean submit(Runnable task) {
    if (closed.get() && Thread.currentThread() != loop) {
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
    if (c.scheduled.compareAndSet(false, true)) {
      if (!ready.offer(c)) {
        // Cannot happen: a connection is queued at most once and there are at most
        // MAX_CONNECTIONS; kept safe all the same.
        c.scheduled.set(false);
        if (!submit(c::drainOutbox)) {
          c.discardOutbox();
        }
        return;
      }
      wakeUp();
    }
    if (terminated) {
      c.discardOutbox();
    }
  }

  private void wakeUp() {
    if (sleeping.get()) {
      VerbsNatives.wake(ctx);
    }
  }

  private <T> T callOnLoop(Callable<T> call) throws IOException {
    if (Thread.currentThread() == loop) {
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
      return result.get(conf.connectTimeoutMs(), TimeUnit.MILLISECONDS);
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
          + conf.connectTimeoutMs() + " ms");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new TransportException("interrupted waiting for the verbs event loop", e);
    }
  }

  private void runLoop() {
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
      LOG.error("verbs event loop on {} failed; closing its connections", device.name(), t);
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
        LOG.error("verbs: an event-loop task failed on {}", device.name(), e);
      }
    }
  }

  private void processReady() {
    VerbsConnection c;
    while ((c = ready.poll()) != null) {
      try {
        c.drainOutbox();
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
          onConnectRequest(id, cmRecords.getLong(at + VerbsNatives.CM_LISTEN_ID), at);
          continue;
        }
        VerbsConnection c = byCmId.get(id);
        if (c != null) {
          try {
            c.onCmEvent(type, status, cmRecords, at);
          } catch (RuntimeException e) {
            connectionFailed(c, e);
          }
        }
      }
    } while (n == CM_BATCH);
  }

  private void onConnectRequest(long id, long listenId, int at) {
    VerbsListener l = listeners.get(listenId);
    int credits = VerbsHeader.creditsFromPrivateData(cmRecords,
        at + VerbsNatives.CM_PRIVATE_DATA, cmRecords.getInt(at + VerbsNatives.CM_PRIVATE_DATA_LEN));
    if (l != null && credits > 0 && !VerbsCredits.validWindow(credits)) {
      LOG.warn("verbs: refusing connection on {}: the peer announced {} receive credits (at"
          + " most {})", l.address(), credits, VerbsCredits.MAX_PEER_WINDOW);
    }
    int connId = l == null || l.isClosed() || stopping
        || !VerbsCredits.validWindow(credits) ? -1 : nextConnId();
    if (connId < 0) {
      VerbsNatives.reject(id);
      destroyId(id);
      return;
    }
    VerbsConnection c = new VerbsConnection(this, connId, id, l, l.address());
    c.refreshRemoteAddress();
    c.setPeerCredits(credits);
    byCmId.put(id, c);
    addConnection(c);
    try {
      c.setUpQueuePair();
      VerbsNatives.accept(ctx, id, c.privateData(),
          cmRecords.getShort(at + VerbsNatives.CM_RESPONDER_RESOURCES) & 0xffff,
          cmRecords.getShort(at + VerbsNatives.CM_INITIATOR_DEPTH) & 0xffff);
    } catch (IOException e) {
      LOG.warn("verbs: refusing connection from {} on {}: {}", c.remoteAddress(), l.address(),
          e.getMessage());
      VerbsNatives.reject(id);
      c.closeConnection(e);
    }
  }

  void closeListener(VerbsListener l) {
    submit(() -> {
      if (listeners.remove(l.cmId) != null) {
        destroyId(l.cmId);
      }
    });
  }

  /** Grows the shared CQ so every QP's send + receive depth fits. */
  void reserveCq(int entries) throws NativeIoException {
    int needed = cqCommitted + entries;
    int size = VerbsNatives.cqSize(ctx);
    if (needed > size) {
      VerbsNatives.resizeCq(ctx, Math.max(needed, size * 2));
    }
    cqCommitted = needed;
  }

  void releaseCq(int entries) {
    cqCommitted -= entries;
  }

  /** Destroys an id (and its QP); false, logged, when that failed. */
  boolean destroyId(long id) {
    try {
      VerbsNatives.destroyId(ctx, id);
      return true;
    } catch (NativeIoException e) {
      logTeardownProblem(e);
      return false;
    }
  }

  /** Teardown failures cannot be retried or reported to a caller: logged once, here. */
  void logTeardownProblem(NativeIoException e) {
    LOG.warn("verbs teardown on {}: {}", device.name(), e.getMessage());
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
  // Close
  // ======================================================================================

  @Override
  public void close() throws IOException {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    tasks.add(() -> {
      stopping = true;
      stopDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(CLOSE_GRACE_MS);
      for (VerbsListener l : listeners.values()) {
        destroyId(l.cmId);
      }
      listeners.clear();
      for (int i = 0; i < connectionHigh; i++) {
        VerbsConnection c = connections[i];
        if (c != null) {
          c.closeConnection(new ConnectionClosedException("verbs transport closed"));
        }
      }
    });
    VerbsNatives.wake(ctx);
    if (Thread.currentThread() == loop) {
      // Closed from a callback: the loop cannot wait for itself; another thread frees the
      // native context once the loop has stopped.
      Thread reaper = new Thread(() -> {
        try {
          releaseAfterLoop();
        } catch (IOException e) {
          LOG.warn("verbs: closing the transport on {} failed", device.name(), e);
        }
      }, loop.getName() + "-close");
      reaper.setDaemon(true);
      reaper.start();
      return;
    }
    releaseAfterLoop();
  }

  private void releaseAfterLoop() throws IOException {
    IOException failure = null;
    try {
      loop.join(CLOSE_GRACE_MS + 5000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      failure = new TransportException("interrupted closing the verbs transport", e);
    }
    if (loop.isAlive()) {
      // Freeing the context under a running loop would crash the JVM; leak it instead.
      IOException e = new TransportException("verbs event loop on " + device.name()
          + " did not stop; its native resources are leaked");
      if (failure != null) {
        e.addSuppressed(failure);
      }
      throw e;
    }
    for (Exposure e : exposuresByKey.values()) {
      deregisterExposure(e); // exposed and never unexposed: the registration goes with us
    }
    exposuresByKey.clear();
    try {
      pool.close();
    } catch (RuntimeException e) {
      failure = add(failure, new TransportException("deregistering buffer slabs failed", e));
    }
    try {
      VerbsNatives.close(ctx);
    } catch (NativeIoException e) {
      failure = add(failure, e);
    }
    if (loopFailure != null && failure != null) {
      failure.addSuppressed(loopFailure);
    }
    if (failure != null) {
      throw failure;
    }
  }

  private static IOException add(IOException first, IOException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  @Override
  public String toString() {
    return "VerbsTransport[" + device.name() + " port " + devicePort + ", " + pool + "]";
  }
}
