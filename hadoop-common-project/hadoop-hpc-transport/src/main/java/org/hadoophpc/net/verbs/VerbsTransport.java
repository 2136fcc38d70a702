/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

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
import org.hadoophpc.net.TransportMetrics;
import org.hadoophpc.net.TransportMetricsSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The RDMA transport: RC queue pairs set up by rdma_cm on one device, two-sided messages by
 * SEND/RECV with credit-based flow control and rendezvous for large payloads (see
 * {@link VerbsConnection} and {@link VerbsHeader}), one-sided reads and writes by RDMA READ and
 * WRITE of peers' {@link RemoteRegion}s.
 *
 * <p>Threading: one event-loop thread ({@link VerbsEventLoop}) owns the native context (CQ,
 * event channel) and every connection and listener; other threads hand it work through its
 * ready queue and tasks.
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
 * when not even {@value VerbsRing#MIN_RECV_DEPTH} receives fit; the rest of the pool stays for
 * messages ({@link VerbsRing}: sizes and ownership).
 * Exposed regions and their revocation at every peer: {@link VerbsExposures}. Devices without
 * type 2 memory windows are refused at
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
  private static final int CQ_INITIAL = 1024;
  private static final int LISTEN_BACKLOG = 128;

  /** Handle, address and keys of one registered slab. */
  record MrInfo(long handle, long addr, int lkey, int rkey) {
  }

  private final TransportConf conf;
  private final RdmaDevice device;
  private final int devicePort;
  private final long ctx;
  private final BufferPool pool;
  private final Map<Long, MrInfo> registrations = new ConcurrentHashMap<>();
  private final VerbsExposures exposures;
  private final VerbsEventLoop loop;
  private final int recvDepth;
  /** Ring bytes connections may hold together: a quarter of the pool. */
  private final long ringBudget;
  /** Ring bytes connections hold now; written by the loop only. */
  private volatile long ringBytesInUse;

  // ---- loop-owned ----
  private final Map<Long, VerbsListener> listeners = new HashMap<>();
  private int cqCommitted;

  private final TransportMetrics metrics = new TransportMetrics();
  private TransportMetricsSource metricsSource;

  private VerbsTransport(TransportConf conf, RdmaDevice device, int devicePort, long ctx) {
    this.conf = conf;
    this.device = device;
    this.devicePort = devicePort;
    this.ctx = ctx;
    this.recvDepth = VerbsRing.wantedDepth(conf);
    this.ringBudget = conf.bufferPoolMax() / 4;
    this.pool = conf.newBufferPool(new Registrar());
    this.loop = new VerbsEventLoop(this, ctx, device.name());
    this.exposures = new VerbsExposures(ctx, loop, conf.ioTimeoutMs(), device.name());
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
    VerbsRing.checkPoolHoldsARing(conf);
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
    t.metricsSource = TransportMetricsSource.register(t, t.metrics);
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
    return new Thread[] {loop.thread()};
  }

  long ctx() {
    return ctx;
  }

  /** The receive depth connections get while the rings' budget allows. */
  int recvDepth() {
    return recvDepth;
  }

  /** The ring of a connection of a fresh transport configured by {@code conf} (tests). */
  static long ringBytes(TransportConf conf) {
    return VerbsRing.ringBytes(conf);
  }

  /**
   * Loop: reserves the ring of a new connection within the rings' budget and returns its
   * receive depth: the configured one, or the largest that still fits.
   *
   * @throws TransportException naming {@code hadoop.hpc.transport.buffer.pool.max} when not
   *         even a ring of {@value VerbsRing#MIN_RECV_DEPTH} receives fits
   */
  int reserveRing(InetSocketAddress peer) throws TransportException {
    for (int d = recvDepth; d >= VerbsRing.MIN_RECV_DEPTH; d--) {
      long bytes = VerbsRing.ringBytes(conf.maxInflight(), d);
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
    return loop.callOnLoop(() -> {
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
    }, conf.connectTimeoutMs());
  }

  private static InetAddress resolved(InetSocketAddress address) throws TransportException {
    if (address == null || address.isUnresolved()) {
      throw new TransportException("cannot use unresolved address " + address);
    }
    return address.getAddress();
  }

  @Override
  public CompletableFuture<Connection> connect(InetSocketAddress address) {
    return metrics.countConnect(connectNow(address));
  }

  @Override
  public TransportMetrics metrics() {
    return metrics;
  }

  private CompletableFuture<Connection> connectNow(InetSocketAddress address) {
    CompletableFuture<Connection> future = new CompletableFuture<>();
    InetAddress ip;
    try {
      ip = resolved(address);
    } catch (TransportException e) {
      future.completeExceptionally(e);
      return future;
    }
    if (!loop.submit(() -> startConnect(address, ip, future))) {
      future.completeExceptionally(new ConnectionClosedException("verbs transport is closed"));
    }
    return future;
  }

  private void startConnect(InetSocketAddress address, InetAddress ip,
      CompletableFuture<Connection> future) {
    if (loop.isStopping()) {
      future.completeExceptionally(new ConnectionClosedException("verbs transport is closed"));
      return;
    }
    int connId = loop.nextConnId();
    if (connId < 0) {
      future.completeExceptionally(new TransportException("verbs connect to " + address
          + ": this transport already has " + VerbsEventLoop.MAX_CONNECTIONS
          + " connections"));
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
    c.setUp.connecting(future, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
        conf.connectTimeoutMs()));
    loop.add(c);
  }

  @Override
  public RemoteRegion expose(Buffer buffer) throws IOException {
    if (loop.isClosed()) {
      throw new ConnectionClosedException("verbs transport is closed");
    }
    mr(buffer); // only this pool's memory
    return exposures.expose(buffer);
  }

  /**
   * Revokes the region at every connected peer and waits (up to the io timeout) for each to
   * confirm, so operations a peer starts after this returns fail; then deregisters the region,
   * so even a peer ignoring the revocation cannot reach it any more ({@link VerbsExposures}).
   */
  @Override
  public void unexpose(RemoteRegion region) {
    if (loop.isClosed()) {
      return; // close() deregisters what is still exposed
    }
    exposures.unexpose(region);
  }

  /** Regions exposed to peers, and their revocations. */
  VerbsExposures exposures() {
    return exposures;
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

  /** Loop: a peer connects to one of the listeners ({@code at}: its record in {@code rec}). */
  void onConnectRequest(long id, long listenId, ByteBuffer cmRecords, int at) {
    VerbsListener l = listeners.get(listenId);
    int credits = VerbsHeader.creditsFromPrivateData(cmRecords,
        at + VerbsNatives.CM_PRIVATE_DATA, cmRecords.getInt(at + VerbsNatives.CM_PRIVATE_DATA_LEN));
    if (l != null && credits > 0 && !VerbsCredits.validWindow(credits)) {
      LOG.warn("verbs: refusing connection on {}: the peer announced {} receive credits (at"
          + " most {})", l.address(), credits, VerbsCredits.MAX_PEER_WINDOW);
    }
    int connId = l == null || l.isClosed() || loop.isStopping()
        || !VerbsCredits.validWindow(credits) ? -1 : loop.nextConnId();
    if (connId < 0) {
      VerbsNatives.reject(id);
      destroyId(id);
      return;
    }
    VerbsConnection c = new VerbsConnection(this, connId, id, l, l.address());
    c.refreshRemoteAddress();
    c.setUp.setPeerCredits(credits);
    loop.add(c);
    try {
      c.setUp.setUpQueuePair();
      VerbsNatives.accept(ctx, id, c.setUp.privateData(),
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
    loop.submit(() -> {
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

  /** The loop that owns this transport's connections. */
  VerbsEventLoop loop() {
    return loop;
  }

  // ======================================================================================
  // Close
  // ======================================================================================

  @Override
  public void close() throws IOException {
    TransportMetricsSource source = metricsSource;
    if (source != null) {
      metricsSource = null;
      source.unregister();
    }
    if (!loop.shutDown(() -> {
      for (VerbsListener l : listeners.values()) {
        destroyId(l.cmId);
      }
      listeners.clear();
    }, CLOSE_GRACE_MS)) {
      return;
    }
    if (loop.inLoop()) {
      // Closed from a callback: the loop cannot wait for itself; another thread frees the
      // native context once the loop has stopped.
      Thread reaper = new Thread(() -> {
        try {
          releaseAfterLoop();
        } catch (IOException e) {
          LOG.warn("verbs: closing the transport on {} failed", device.name(), e);
        }
      }, loop.thread().getName() + "-close");
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
    if (loop.thread().isAlive()) {
      // Freeing the context under a running loop would crash the JVM; leak it instead.
      IOException e = new TransportException("verbs event loop on " + device.name()
          + " did not stop; its native resources are leaked");
      if (failure != null) {
        e.addSuppressed(failure);
      }
      throw e;
    }
    exposures.closeAll(); // exposed and never unexposed: the registrations go with us
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
    Throwable loopFailure = loop.failure();
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
