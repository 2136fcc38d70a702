/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.nativeio.NativeIoException;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One RC queue pair, set up by rdma_cm, and the protocol spoken on it (see {@link VerbsHeader}).
 *
 * <p>Flow control: each side pre-posts {@code recvDepth} receives (pool buffers of
 * {@link VerbsTransport#EAGER_SIZE} plus a header slot) and tells the peer that number in the
 * connection's private data. A SEND is posted only while the peer has a receive for it
 * ({@code sendCredits}); every re-posted receive becomes a credit returned in the next header,
 * or in an explicit CREDIT message once half the window is owed. The last credit is kept for
 * CREDIT messages so two busy peers cannot both end up unable to return credits.
 *
 * <p>Large messages go by rendezvous: the sender announces (address, rkey, length) of its
 * registered payload, the receiver RDMA-READs it into a pool buffer and answers RNDV_DONE,
 * and only then does the sender release its buffer.
 *
 * <p>Threading: every field except {@link #state} and {@link #inflight} belongs to the
 * transport's event loop. Public methods may be called from any thread; they only check
 * limits and hand work to the loop.
 */
final class VerbsConnection implements Connection {
  static final int CONNECTING = 0;
  static final int OPEN = 1;
  static final int CLOSING = 2;
  static final int CLOSED = 3;

  private static final long RECV_FLAG = 0x8000_0000L;

  private final VerbsTransport transport;
  final int connId;
  long cmId;
  private final VerbsListener listener;
  private volatile InetSocketAddress remote;
  volatile int state = CONNECTING;
  /** Set by {@link #close()} at once, so the caller sees the connection closed on return. */
  private volatile boolean closeRequested;
  private final AtomicInteger inflight = new AtomicInteger();

  // ---- set-up (loop) ----
  CompletableFuture<Connection> connectFuture;
  long connectDeadlineNanos;
  private boolean hasQp;
  private boolean cqReserved;
  private boolean established;

  // ---- queue pair resources (loop) ----
  private final int recvDepth;
  private final int sendDepth;
  /**
   * The connection's own registered ring: receive header slots, send header slots, then one
   * eager payload area per receive. Receives land here, not in the pool, so the pool holds only
   * payloads handed to users (an eager payload is copied into a pool buffer on delivery).
   */
  private ByteBuffer ring;
  private long ringHandle;
  private long ringAddress;
  private int ringLkey;
  private int payloadBase;
  private final boolean[] recvPosted;
  /** Receive slots whose message waits for pool memory before it can be delivered. */
  private final ArrayDeque<Integer> heldSlots = new ArrayDeque<>();
  private final VerbsOp[] sendOps;
  private final int[] freeSend;
  private int freeSendTop;
  private int postedWrs;

  // ---- flow control (loop) ----
  private int sendCredits;
  private int creditsToReturn;
  private final ArrayDeque<VerbsOp> messageBacklog = new ArrayDeque<>();
  private final ArrayDeque<VerbsOp> rdmaBacklog = new ArrayDeque<>();
  private final ArrayDeque<VerbsOp> rendezvousWaiting = new ArrayDeque<>();

  // ---- requests and rendezvous (loop) ----
  private int nextReqId = 1;
  private final Map<Integer, PendingRequest> requests = new HashMap<>();
  private final Map<Integer, Buffer> exposedRequests = new HashMap<>();
  private final Map<Integer, Buffer> exposedResponses = new HashMap<>();
  private final LinkedHashSet<VerbsOp> userOps = new LinkedHashSet<>();
  /**
   * Keys of the peer's regions it unexposed. RC cannot survive a remote access error, so
   * revocation is enforced here, before posting; grows with the peer's unexposes over the life
   * of the connection (8 bytes each).
   */
  private final java.util.Set<Long> revoked = new java.util.HashSet<>();

  // ---- teardown (loop) ----
  private long closeDeadlineNanos;
  private Throwable closeCause;

  private static final class PendingRequest {
    final CompletableFuture<Buffer> future;
    final long deadlineNanos;

    PendingRequest(CompletableFuture<Buffer> future, long deadlineNanos) {
      this.future = future;
      this.deadlineNanos = deadlineNanos;
    }
  }

  VerbsConnection(VerbsTransport transport, int connId, long cmId, VerbsListener listener,
      InetSocketAddress remote) {
    this.transport = transport;
    this.connId = connId;
    this.cmId = cmId;
    this.listener = listener;
    this.remote = remote;
    this.recvDepth = transport.recvDepth();
    this.sendDepth = transport.sendDepth();
    this.recvPosted = new boolean[recvDepth];
    this.sendOps = new VerbsOp[sendDepth];
    this.freeSend = new int[sendDepth];
    for (int i = 0; i < sendDepth; i++) {
      freeSend[i] = sendDepth - 1 - i;
    }
    this.freeSendTop = sendDepth;
  }

  // ======================================================================================
  // Public API (any thread)
  // ======================================================================================

  @Override
  public InetSocketAddress remoteAddress() {
    return remote;
  }

  @Override
  public boolean isOpen() {
    return state == OPEN && !closeRequested;
  }

  @Override
  public int inFlight() {
    return inflight.get();
  }

  private boolean acquire() {
    while (true) {
      int n = inflight.get();
      if (n >= transport.conf().maxInflight()) {
        return false;
      }
      if (inflight.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  private void checkSize(int length) {
    if (length > transport.conf().maxMessageSize()) {
      throw new IllegalArgumentException(length + " bytes exceed hadoop.hpc.transport.max."
          + "message.size=" + transport.conf().maxMessageSize());
    }
  }

  private <T> CompletableFuture<T> closedFuture() {
    return CompletableFuture.failedFuture(new ConnectionClosedException("verbs connection to "
        + remote + " is closed"));
  }

  @Override
  public CompletableFuture<Buffer> request(Buffer request) {
    checkSize(request.readableBytes());
    if (!isOpen()) {
      request.release(); // ownership passed to the transport, which cannot send it
      return closedFuture();
    }
    if (!acquire()) {
      return null;
    }
    Buffer payload = request;
    if (request.pool() != transport.bufferPool()) {
      payload = transport.copyIntoPool(request);
      if (payload == null) {
        inflight.decrementAndGet();
        return null;
      }
      request.release();
    }
    CompletableFuture<Buffer> future = new CompletableFuture<>();
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(transport.conf()
        .ioTimeoutMs());
    Buffer message = payload;
    if (!transport.submit(() -> startRequest(message, future, deadline))) {
      inflight.decrementAndGet();
      message.release();
      return closedFuture();
    }
    return future;
  }

  @Override
  public CompletableFuture<Void> read(RemoteRegion region, long offset, int length,
      Buffer destination) {
    checkSize(length);
    if (destination.nio().remaining() < length) {
      throw new IllegalArgumentException("destination has " + destination.nio().remaining()
          + " bytes left, " + length + " to read");
    }
    return startUser(VerbsOp.USER_READ, destination, destination.nio().position(), length,
        region, offset);
  }

  @Override
  public CompletableFuture<Void> write(Buffer source, RemoteRegion region, long offset) {
    int length = source.nio().remaining();
    checkSize(length);
    return startUser(VerbsOp.USER_WRITE, source, source.nio().position(), length, region,
        offset);
  }

  private CompletableFuture<Void> startUser(int kind, Buffer local, int position, int length,
      RemoteRegion region, long offset) {
    if (local.pool() != transport.bufferPool()) {
      throw new IllegalArgumentException("one-sided transfers need a buffer of this transport's"
          + " pool (registered memory): " + local);
    }
    if (!isOpen()) {
      return closedFuture();
    }
    if (offset < 0 || length < 0 || offset > region.length() - length) {
      // Checked here: a remote access error would move the whole QP to error.
      return CompletableFuture.failedFuture(new TransportException("verbs "
          + (kind == VerbsOp.USER_READ ? "read" : "write") + " of [" + offset + ", "
          + (offset + length) + ") is outside the " + region.length() + "-byte region of "
          + remote));
    }
    if (length == 0) {
      return CompletableFuture.completedFuture(null); // nothing to move; no work request
    }
    if (!acquire()) {
      return null;
    }
    VerbsOp op = new VerbsOp(kind);
    op.local = local;
    op.localPosition = position;
    op.length = length;
    op.remoteAddress = region.address() + offset;
    op.remoteKey = (int) region.key();
    op.regionKey = region.key();
    op.future = new CompletableFuture<>();
    op.deadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(transport.conf()
        .ioTimeoutMs());
    CompletableFuture<Void> future = op.future;
    if (!transport.submit(() -> startUserOp(op))) {
      inflight.decrementAndGet();
      return closedFuture();
    }
    return future;
  }

  @Override
  public void close() {
    closeRequested = true;
    transport.submit(() -> closeConnection(new ConnectionClosedException("verbs connection to "
        + remote + " closed locally")));
  }

  @Override
  public String toString() {
    return "VerbsConnection[" + connId + ", " + remote + ", state=" + state + ", inflight="
        + inflight.get() + "]";
  }

  // ======================================================================================
  // Set-up (loop)
  // ======================================================================================

  /** Creates the QP, takes the header slots and pre-posts every receive. */
  void setUpQueuePair() throws java.io.IOException {
    transport.reserveCq(recvDepth + sendDepth);
    cqReserved = true;
    VerbsNatives.createQp(transport.ctx(), cmId, sendDepth, recvDepth);
    hasQp = true;
    payloadBase = (recvDepth + sendDepth) * VerbsHeader.BYTES;
    ring = ByteBuffer.allocateDirect(payloadBase + recvDepth * VerbsTransport.EAGER_SIZE);
    long[] info = new long[3];
    ringHandle = VerbsNatives.regMr(transport.ctx(), ring, info);
    ringAddress = info[0];
    ringLkey = (int) info[1];
    for (int i = 0; i < recvDepth; i++) {
      int rc = postReceive(i);
      if (rc != 0) {
        throw new NativeIoException("ibv_post_recv", -rc, "posting initial receives failed");
      }
    }
  }

  byte[] privateData() {
    return VerbsHeader.privateData(recvDepth);
  }

  void onCmEvent(int type, int status, ByteBuffer rec, int at) {
    switch (type) {
      case VerbsNatives.CM_ADDR_RESOLVED:
        try {
          VerbsNatives.resolveRoute(cmId, transport.stepTimeoutMs());
        } catch (NativeIoException e) {
          failSetUp(new TransportException("verbs connect to " + remote + ": " + e.getMessage(),
              e));
        }
        return;
      case VerbsNatives.CM_ROUTE_RESOLVED:
        try {
          setUpQueuePair();
          VerbsNatives.connect(transport.ctx(), cmId, privateData());
        } catch (java.io.IOException e) {
          failSetUp(new TransportException("verbs connect to " + remote + ": " + e.getMessage(),
              e));
        }
        return;
      case VerbsNatives.CM_ESTABLISHED:
        onEstablished(rec, at);
        return;
      case VerbsNatives.CM_ADDR_ERROR:
      case VerbsNatives.CM_ROUTE_ERROR:
      case VerbsNatives.CM_UNREACHABLE:
      case VerbsNatives.CM_REJECTED:
      case VerbsNatives.CM_CONNECT_ERROR:
        if (state == CONNECTING) {
          String what = type == VerbsNatives.CM_REJECTED ? "refused" : "failed";
          failSetUp(new TransportException("verbs connection to " + remote + " " + what + " ("
              + VerbsNatives.cmEventName(type) + ", status " + status + ")"));
        } else {
          closeConnection(new ConnectionClosedException("verbs connection to " + remote
              + " lost (" + VerbsNatives.cmEventName(type) + ")"));
        }
        return;
      case VerbsNatives.CM_DISCONNECTED:
        closeConnection(new ConnectionClosedException("verbs connection to " + remote
            + " closed by the peer"));
        return;
      case VerbsNatives.CM_DEVICE_REMOVAL:
        closeConnection(new ConnectionClosedException("verbs connection to " + remote
            + ": RDMA device removed"));
        return;
      default:
        return;
    }
  }

  /** Passive side: remembers the peer's window before accepting. */
  void setPeerCredits(int credits) {
    sendCredits = credits;
  }

  private void onEstablished(ByteBuffer rec, int at) {
    if (state != CONNECTING) {
      return;
    }
    if (listener == null) {
      int credits = VerbsHeader.creditsFromPrivateData(rec, at + VerbsNatives.CM_PRIVATE_DATA,
          rec.getInt(at + VerbsNatives.CM_PRIVATE_DATA_LEN));
      if (credits <= 0) {
        failSetUp(new TransportException("verbs connection to " + remote
            + ": the peer does not speak hadoop-hpc verbs protocol " + VerbsHeader.VERSION));
        return;
      }
      sendCredits = credits;
    }
    established = true;
    state = OPEN;
    if (connectFuture != null) {
      connectFuture.complete(this);
    }
    pump();
  }

  void failSetUp(TransportException cause) {
    closeConnection(cause);
  }

  void refreshRemoteAddress() {
    try {
      byte[] raw = VerbsNatives.peerAddress(cmId);
      int n = raw.length - 2;
      byte[] ip = java.util.Arrays.copyOf(raw, n);
      int port = ((raw[n] & 0xff) << 8) | (raw[n + 1] & 0xff);
      remote = new InetSocketAddress(java.net.InetAddress.getByAddress(ip), port);
    } catch (java.io.IOException e) {
      // Keeps the address known so far (the listener's view); only used for messages.
      remote = remote == null ? new InetSocketAddress(0) : remote;
    }
  }

  // ======================================================================================
  // Data path (loop)
  // ======================================================================================

  private void startRequest(Buffer payload, CompletableFuture<Buffer> future, long deadline) {
    if (state != OPEN) {
      payload.release();
      inflight.decrementAndGet();
      future.completeExceptionally(closeCauseOrDefault());
      return;
    }
    int reqId = nextReqId++;
    if (nextReqId == Integer.MAX_VALUE) {
      nextReqId = 1;
    }
    requests.put(reqId, new PendingRequest(future, deadline));
    messageBacklog.add(outbound(VerbsHeader.REQUEST, VerbsHeader.REQUEST_RNDV, reqId, payload,
        exposedRequests));
    pump();
  }

  /** An eager message, or a rendezvous announcement whose payload stays exposed in held. */
  private VerbsOp outbound(byte eager, byte rendezvous, int reqId, Buffer payload,
      Map<Integer, Buffer> held) {
    if (payload.readableBytes() <= VerbsTransport.EAGER_SIZE) {
      return VerbsOp.message(eager, 0, reqId, payload);
    }
    VerbsTransport.MrInfo mr = transport.mr(payload);
    long address = mr.addr() + payload.slabOffset() + payload.nio().position();
    Buffer previous = held.put(reqId, payload);
    if (previous != null) {
      previous.release(); // a stale id from a timed-out exchange: the peer abandoned it
    }
    return VerbsOp.rendezvous(rendezvous, reqId, payload.readableBytes(), mr.rkey(), address);
  }

  void respond(int reqId, Buffer response) {
    if (state != OPEN) {
      response.release();
      return;
    }
    Buffer payload = response;
    if (response.pool() != transport.bufferPool()) {
      payload = transport.copyIntoPool(response);
      response.release();
      if (payload == null) {
        fail(reqId, "responder out of registered memory for a " + response.capacity()
            + "-byte response");
        return;
      }
    }
    messageBacklog.add(outbound(VerbsHeader.RESPONSE, VerbsHeader.RESPONSE_RNDV, reqId, payload,
        exposedResponses));
    pump();
  }

  /** Tells the peer a region is unexposed; its REVOKE_ACK reaches the transport. */
  boolean revoke(long key) {
    if (state != OPEN) {
      return false;
    }
    messageBacklog.add(VerbsOp.control(VerbsHeader.REVOKE, key));
    pump();
    return true;
  }

  void fail(int reqId, String message) {
    if (state != OPEN) {
      return;
    }
    byte[] text = String.valueOf(message).getBytes(StandardCharsets.UTF_8);
    int len = Math.min(text.length, VerbsTransport.EAGER_SIZE);
    Buffer payload = transport.bufferPool().allocate(len);
    if (payload != null) {
      payload.nio().put(text, 0, len).flip();
    }
    messageBacklog.add(VerbsOp.message(VerbsHeader.FAILURE, 0, reqId, payload));
    pump();
  }

  private void startUserOp(VerbsOp op) {
    if (state != OPEN) {
      finishUser(op, closeCauseOrDefault());
      return;
    }
    if (revoked.contains(op.regionKey)) {
      finishUser(op, new TransportException("verbs " + (op.kind == VerbsOp.USER_READ ? "read"
          : "write") + " of a region " + remote + " no longer exposes (unexposed)"));
      return;
    }
    userOps.add(op);
    rdmaBacklog.add(op);
    pump();
  }

  /** Posts what credits and send-queue slots allow; returns credits when owed. */
  void pump() {
    if (state != OPEN) {
      return;
    }
    while (!rdmaBacklog.isEmpty() && freeSendTop > 0) {
      VerbsOp op = rdmaBacklog.poll();
      if (op.isUser() && op.future.isDone()) {
        continue; // timed out while queued
      }
      if (!postRdma(op)) {
        return;
      }
    }
    while (!messageBacklog.isEmpty() && freeSendTop > 0 && sendCredits >= 2) {
      if (!postMessage(messageBacklog.poll())) {
        return;
      }
    }
    if (creditsToReturn >= Math.max(1, recvDepth / 2) && sendCredits >= 1 && freeSendTop > 0
        && (messageBacklog.isEmpty() || sendCredits < 2)) {
      postMessage(VerbsOp.message(VerbsHeader.CREDIT, 0, 0, null));
    }
  }

  private long wrId(int slot, boolean recv) {
    return ((long) connId << 32) | (recv ? RECV_FLAG : 0L) | slot;
  }

  private boolean postMessage(VerbsOp op) {
    int slot = freeSend[--freeSendTop];
    int at = (recvDepth + slot) * VerbsHeader.BYTES;
    int credits = Math.min(creditsToReturn, 0xffff);
    VerbsHeader.write(ring, at, op.type, op.flags, credits, op.reqId, op.length, op.rkey,
        op.address);
    long addr = 0;
    int len = 0;
    int lkey = 0;
    if (op.payload != null && op.payload.readableBytes() > 0) {
      VerbsTransport.MrInfo mr = transport.mr(op.payload);
      addr = mr.addr() + op.payload.slabOffset() + op.payload.nio().position();
      len = op.payload.readableBytes();
      lkey = mr.lkey();
    }
    int rc = VerbsNatives.postSend(cmId, wrId(slot, false), ringAddress + at,
        VerbsHeader.BYTES, ringLkey, addr, len, lkey);
    if (rc != 0) {
      freeSend[freeSendTop++] = slot;
      releaseMessage(op);
      closeConnection(new ConnectionClosedException("verbs connection to " + remote
          + ": ibv_post_send failed: errno " + -rc));
      return false;
    }
    creditsToReturn -= credits;
    sendCredits--;
    sendOps[slot] = op;
    postedWrs++;
    return true;
  }

  private boolean postRdma(VerbsOp op) {
    int slot = freeSend[--freeSendTop];
    VerbsTransport.MrInfo mr = transport.mr(op.local);
    long addr = mr.addr() + op.local.slabOffset() + op.localPosition;
    boolean read = op.kind != VerbsOp.USER_WRITE;
    int rc = VerbsNatives.postRdma(cmId, wrId(slot, false), read, addr, op.length, mr.lkey(),
        op.remoteAddress, op.remoteKey);
    if (rc != 0) {
      freeSend[freeSendTop++] = slot;
      failRdma(op, new ConnectionClosedException("verbs connection to " + remote
          + ": ibv_post_send failed: errno " + -rc));
      closeConnection(new ConnectionClosedException("verbs connection to " + remote
          + ": ibv_post_send failed: errno " + -rc));
      return false;
    }
    sendOps[slot] = op;
    postedWrs++;
    return true;
  }

  /** Posts receive slot i; 0 or -errno. */
  private int postReceive(int i) {
    int rc = VerbsNatives.postRecv(cmId, wrId(i, true), ringAddress + (long) i
        * VerbsHeader.BYTES, VerbsHeader.BYTES, ringLkey, ringAddress + payloadBase + (long) i
        * VerbsTransport.EAGER_SIZE, VerbsTransport.EAGER_SIZE, ringLkey);
    if (rc != 0) {
      return rc;
    }
    recvPosted[i] = true;
    postedWrs++;
    return 0;
  }

  /** Re-posts receives that lacked a buffer, retries rendezvous reads waiting for memory. */
  void maintain() {
    if (state != OPEN) {
      return;
    }
    while (!heldSlots.isEmpty() && state == OPEN) {
      if (!deliverEager(heldSlots.peek())) {
        break;
      }
      heldSlots.poll();
    }
    while (!rendezvousWaiting.isEmpty()) {
      VerbsOp op = rendezvousWaiting.peek();
      op.local = transport.bufferPool().allocate(op.length);
      if (op.local == null) {
        break;
      }
      rendezvousWaiting.poll();
      rdmaBacklog.add(op);
    }
    pump();
  }

  void onCompletion(long wrId, int status, int byteLen, int vendorStatus) {
    int slot = (int) (wrId & 0x7fff_ffffL);
    if ((wrId & RECV_FLAG) != 0) {
      onReceive(slot, status, byteLen, vendorStatus);
    } else {
      onSendCompletion(slot, status, vendorStatus);
    }
    if (state == CLOSING && postedWrs == 0) {
      finish();
    }
  }

  private TransportException completionError(int status, int vendorStatus) {
    if (status == VerbsNatives.WC_FLUSHED) {
      return closeCauseOrDefault();
    }
    return new ConnectionClosedException("verbs connection to " + remote + ": work request "
        + "failed: " + VerbsNatives.wcStatusText(vendorStatus));
  }

  private void onSendCompletion(int slot, int status, int vendorStatus) {
    if (slot >= sendDepth || sendOps[slot] == null) {
      return;
    }
    VerbsOp op = sendOps[slot];
    sendOps[slot] = null;
    freeSend[freeSendTop++] = slot;
    postedWrs--;
    if (status != VerbsNatives.WC_SUCCESS) {
      TransportException cause = completionError(status, vendorStatus);
      if (op.kind == VerbsOp.MESSAGE) {
        releaseMessage(op);
      } else {
        failRdma(op, cause);
      }
      closeConnection(cause);
      return;
    }
    switch (op.kind) {
      case VerbsOp.MESSAGE:
        releaseMessage(op);
        break;
      case VerbsOp.USER_READ:
        op.local.nio().position(op.localPosition + op.length);
        finishUser(op, null);
        break;
      case VerbsOp.USER_WRITE:
        finishUser(op, null);
        break;
      case VerbsOp.RNDV_READ:
        onRendezvousRead(op);
        break;
      default:
        throw new IllegalStateException("unknown verbs op kind " + op.kind);
    }
    pump();
  }

  private static void releaseMessage(VerbsOp op) {
    if (op.payload != null) {
      op.payload.release();
      op.payload = null;
    }
  }

  private void failRdma(VerbsOp op, Throwable cause) {
    if (op.kind == VerbsOp.RNDV_READ) {
      if (op.local != null) {
        op.local.release();
        op.local = null;
      }
      return;
    }
    finishUser(op, op.timedOut ? timeout(op) : cause);
  }

  private TransportTimeoutException timeout(VerbsOp op) {
    return new TransportTimeoutException("verbs " + (op.kind == VerbsOp.USER_READ ? "read"
        : "write") + " of " + op.length + " bytes on " + remote + " took longer than "
        + transport.conf().ioTimeoutMs() + " ms (hadoop.hpc.transport.io.timeout)");
  }

  private void finishUser(VerbsOp op, Throwable failure) {
    userOps.remove(op);
    if (op.future.isDone()) {
      return;
    }
    inflight.decrementAndGet();
    if (failure == null) {
      op.future.complete(null);
    } else {
      op.future.completeExceptionally(failure);
    }
  }

  private void onReceive(int slot, int status, int byteLen, int vendorStatus) {
    if (slot >= recvDepth || !recvPosted[slot]) {
      return;
    }
    recvPosted[slot] = false;
    postedWrs--;
    if (status != VerbsNatives.WC_SUCCESS) {
      closeConnection(completionError(status, vendorStatus));
      return;
    }
    int at = slot * VerbsHeader.BYTES;
    byte type = VerbsHeader.type(ring, at);
    int reqId = VerbsHeader.reqId(ring, at);
    sendCredits += VerbsHeader.credits(ring, at);

    switch (type) {
      case VerbsHeader.REQUEST:
      case VerbsHeader.RESPONSE:
      case VerbsHeader.FAILURE:
        // The received length is kept in the (local, unused) reserved field of the header slot.
        ring.putInt(at + 24, byteLen - VerbsHeader.BYTES);
        if (!deliverEager(slot)) {
          heldSlots.add(slot);
        }
        pump();
        return;
      case VerbsHeader.REQUEST_RNDV:
      case VerbsHeader.RESPONSE_RNDV:
        startRendezvous(type == VerbsHeader.RESPONSE_RNDV, reqId, VerbsHeader.length(ring, at),
            VerbsHeader.rkey(ring, at), VerbsHeader.address(ring, at));
        break;
      case VerbsHeader.RNDV_DONE:
        Buffer done = (VerbsHeader.flags(ring, at) == 1 ? exposedResponses
            : exposedRequests).remove(reqId);
        if (done != null) {
          done.release();
        }
        break;
      case VerbsHeader.CREDIT:
        break;
      case VerbsHeader.REVOKE:
        revoked.add(VerbsHeader.address(ring, at));
        messageBacklog.add(VerbsOp.control(VerbsHeader.REVOKE_ACK, VerbsHeader.address(ring,
            at)));
        break;
      case VerbsHeader.REVOKE_ACK:
        transport.revokeAcknowledged(VerbsHeader.address(ring, at));
        break;
      default:
        closeConnection(new ConnectionClosedException("verbs connection to " + remote
            + ": protocol error, unknown message type " + type));
        return;
    }
    repost(slot);
    pump();
  }

  private void repost(int slot) {
    if (state != OPEN) {
      return;
    }
    int rc = postReceive(slot);
    if (rc < 0) {
      closeConnection(new ConnectionClosedException("verbs connection to " + remote
          + ": ibv_post_recv failed: errno " + -rc));
    } else {
      creditsToReturn++;
    }
  }

  /**
   * Delivers the eager message of a receive slot (its payload copied into a pool buffer) and
   * re-posts the slot. False when the pool has no buffer now: the slot stays held, so its
   * credit is not returned and the peer slows down until memory comes back.
   */
  private boolean deliverEager(int slot) {
    int at = slot * VerbsHeader.BYTES;
    byte type = VerbsHeader.type(ring, at);
    int reqId = VerbsHeader.reqId(ring, at);
    int length = ring.getInt(at + 24);
    int from = payloadBase + slot * VerbsTransport.EAGER_SIZE;
    Buffer delivered = null;
    PendingRequest answered = null;
    TransportException failure = null;
    if (type == VerbsHeader.FAILURE) {
      answered = requests.remove(reqId);
      if (answered != null) {
        failure = new TransportException("request to " + remote + " failed on the peer: "
            + StandardCharsets.UTF_8.decode(ring.duplicate().limit(from + length)
                .position(from)));
      }
    } else if (type == VerbsHeader.REQUEST || requests.containsKey(reqId)) {
      delivered = transport.bufferPool().allocate(length);
      if (delivered == null) {
        return false;
      }
      delivered.nio().put(ring.duplicate().limit(from + length).position(from)).flip();
      if (type == VerbsHeader.RESPONSE) {
        answered = requests.remove(reqId);
      }
    }
    repost(slot);
    if (answered != null) {
      inflight.decrementAndGet();
      if (failure != null) {
        answered.future.completeExceptionally(failure);
      } else {
        answered.future.complete(delivered);
      }
    } else if (delivered != null) {
      deliverRequest(reqId, delivered);
    }
    return true;
  }

  private void startRendezvous(boolean forResponse, int reqId, int length, int rkey,
      long address) {
    if (forResponse && !requests.containsKey(reqId)) {
      // Timed out here: tell the peer to let go of its buffer without reading it.
      messageBacklog.add(VerbsOp.message(VerbsHeader.RNDV_DONE, 1, reqId, null));
      return;
    }
    VerbsOp op = new VerbsOp(VerbsOp.RNDV_READ);
    op.forResponse = forResponse;
    op.reqId = reqId;
    op.length = length;
    op.remoteAddress = address;
    op.remoteKey = rkey;
    op.local = transport.bufferPool().allocate(length);
    if (op.local == null) {
      rendezvousWaiting.add(op);
    } else {
      rdmaBacklog.add(op);
    }
  }

  private void onRendezvousRead(VerbsOp op) {
    Buffer payload = op.local;
    op.local = null;
    payload.nio().clear().limit(op.length);
    messageBacklog.add(VerbsOp.message(VerbsHeader.RNDV_DONE, op.forResponse ? 1 : 0, op.reqId,
        null));
    if (op.forResponse) {
      PendingRequest pending = requests.remove(op.reqId);
      if (pending == null) {
        payload.release();
        return;
      }
      inflight.decrementAndGet();
      pending.future.complete(payload);
    } else {
      deliverRequest(op.reqId, payload);
    }
  }

  private void deliverRequest(int reqId, Buffer request) {
    RequestHandler handler = listener == null ? null : listener.handler();
    if (handler == null) {
      request.release();
      fail(reqId, "no request handler on this side of the connection");
      return;
    }
    VerbsResponder responder = new VerbsResponder(transport, this, reqId);
    try {
      handler.onRequest(this, request, responder);
    } catch (RuntimeException e) {
      // The handler broke its contract; the requester learns why instead of timing out.
      responder.fail("request handler threw " + e);
    }
  }

  // ======================================================================================
  // Timeouts and teardown (loop)
  // ======================================================================================

  void checkTimeouts(long now) {
    if (state == CONNECTING && connectFuture != null && now - connectDeadlineNanos > 0) {
      TransportTimeoutException e = new TransportTimeoutException("verbs connect to " + remote
          + " took longer than " + transport.conf().connectTimeoutMs()
          + " ms (hadoop.hpc.transport.connect.timeout)");
      connectFuture.completeExceptionally(e);
      closeConnection(e);
      return;
    }
    if (state == CLOSING && now - closeDeadlineNanos > 0) {
      finish();
      return;
    }
    if (state != OPEN) {
      return;
    }
    if (!requests.isEmpty()) {
      Iterator<Map.Entry<Integer, PendingRequest>> it = requests.entrySet().iterator();
      while (it.hasNext()) {
        PendingRequest p = it.next().getValue();
        if (now - p.deadlineNanos > 0) {
          it.remove();
          inflight.decrementAndGet();
          p.future.completeExceptionally(new TransportTimeoutException("verbs request to "
              + remote + " got no response within " + transport.conf().ioTimeoutMs()
              + " ms (hadoop.hpc.transport.io.timeout)"));
        }
      }
    }
    VerbsOp expired = null;
    for (VerbsOp op : userOps) {
      if (now - op.deadlineNanos > 0) {
        expired = op;
        break;
      }
    }
    if (expired != null) {
      // A one-sided transfer the HCA has not finished: the QP must go to error (flushing the
      // work request) before its buffer may be reused, so the connection goes down with it.
      for (VerbsOp op : userOps) {
        if (now - op.deadlineNanos > 0) {
          op.timedOut = true;
        }
      }
      if (rdmaBacklog.remove(expired)) {
        finishUser(expired, timeout(expired));
      }
      closeConnection(timeout(expired));
    }
  }

  private TransportException closeCauseOrDefault() {
    if (closeCause instanceof ConnectionClosedException) {
      return (ConnectionClosedException) closeCause;
    }
    return new ConnectionClosedException("verbs connection to " + remote + " closed",
        closeCause);
  }

  /**
   * Starts teardown: the QP goes to error so posted work flushes; everything not posted fails
   * now, posted work fails as its flush completion arrives ({@link #finish} when none is left
   * or after a grace period).
   */
  void closeConnection(Throwable cause) {
    if (state == CLOSING || state == CLOSED) {
      return;
    }
    boolean wasConnecting = state == CONNECTING;
    state = CLOSING;
    closeCause = cause;
    closeDeadlineNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(
        VerbsTransport.CLOSE_GRACE_MS);
    if (connectFuture != null && !connectFuture.isDone()) {
      connectFuture.completeExceptionally(cause instanceof TransportException ? cause
          : new TransportException("verbs connect to " + remote + " failed", cause));
    }
    if (hasQp && !wasConnecting) {
      VerbsNatives.disconnect(cmId); // errors mean "already disconnected": nothing to do
    }
    TransportException closed = closeCauseOrDefault();
    for (VerbsOp op : messageBacklog) {
      releaseMessage(op);
    }
    messageBacklog.clear();
    for (VerbsOp op : rdmaBacklog) {
      failRdma(op, closed);
    }
    rdmaBacklog.clear();
    for (VerbsOp op : rendezvousWaiting) {
      failRdma(op, closed);
    }
    rendezvousWaiting.clear();
    for (PendingRequest p : requests.values()) {
      inflight.decrementAndGet();
      p.future.completeExceptionally(closed);
    }
    requests.clear();
    if (postedWrs == 0 || wasConnecting) {
      finish();
    }
  }

  /** Destroys the QP and id, then releases every buffer still held. */
  void finish() {
    if (state == CLOSED) {
      return;
    }
    state = CLOSED;
    TransportException closed = closeCauseOrDefault();
    if (cmId != 0) {
      transport.destroyId(cmId);
      transport.forget(this);
      cmId = 0;
    }
    // The QP is gone: nothing will touch these buffers any more.
    List<VerbsOp> posted = new ArrayList<>();
    for (int i = 0; i < sendDepth; i++) {
      if (sendOps[i] != null) {
        posted.add(sendOps[i]);
        sendOps[i] = null;
      }
    }
    for (VerbsOp op : posted) {
      if (op.kind == VerbsOp.MESSAGE) {
        releaseMessage(op);
      } else {
        failRdma(op, closed);
      }
    }
    for (VerbsOp op : new ArrayList<>(userOps)) {
      finishUser(op, op.timedOut ? timeout(op) : closed);
    }
    for (int i = 0; i < recvDepth; i++) {
      recvPosted[i] = false;
    }
    heldSlots.clear();
    postedWrs = 0;
    for (Buffer b : exposedRequests.values()) {
      b.release();
    }
    exposedRequests.clear();
    for (Buffer b : exposedResponses.values()) {
      b.release();
    }
    exposedResponses.clear();
    if (ringHandle != 0) {
      try {
        VerbsNatives.deregMr(transport.ctx(), ringHandle);
      } catch (NativeIoException e) {
        transport.logTeardownProblem(e);
      }
      ringHandle = 0;
    }
    if (cqReserved) {
      transport.releaseCq(recvDepth + sendDepth);
      cqReserved = false;
    }
    transport.removeConnection(this);
    if (listener != null && established) {
      RequestHandler handler = listener.handler();
      handler.onClose(this);
    }
  }
}
