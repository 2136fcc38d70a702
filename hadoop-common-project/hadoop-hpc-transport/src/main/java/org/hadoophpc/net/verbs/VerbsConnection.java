/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One RC queue pair, set up by rdma_cm, and the protocol spoken on it (see {@link VerbsHeader}).
 * This class is the endpoint: the public API, its requests, and delivery of eager messages; each
 * other rule of the protocol is held by a class of its own, which the connection owns:
 * {@link VerbsSetUp}, {@link VerbsRing}, {@link VerbsSendQueue}, {@link VerbsInbound},
 * {@link VerbsAdmission}, {@link VerbsResponder} (the peer's requests and our answers),
 * {@link VerbsRendezvous}, {@link VerbsOneSided}, {@link VerbsInflight}, {@link VerbsOutbox},
 * {@link VerbsOpPool} and {@link VerbsTeardown}.
 *
 * <p>Flow control ({@link VerbsCredits}, {@link VerbsSendQueue}): each side pre-posts
 * {@code recvDepth} receives ({@link VerbsRing}) and tells the peer that number in the
 * connection's private data. The depth is the transport's, or less when the receive rings' share
 * of the pool is nearly used up ({@link VerbsTransport#reserveRing}).
 *
 * <p>Large messages go by rendezvous ({@link VerbsRendezvous}): the payload is read by the peer
 * through a memory window bound to exactly its bytes.
 *
 * <p>Everything a peer sends is checked before it is used ({@link VerbsInbound}). A peer
 * breaking a rule is closed with one WARN line naming the rule ({@link #protocolError}); the
 * other connections go on.
 *
 * <p>Threading: every field except {@link #state}, the in-flight count, the outbox and the
 * spare request objects belongs to the transport's event loop. Public methods may be called
 * from any thread; they check limits and hand work to the loop through {@link #outbox} (a
 * bounded queue, then the transport's ready queue), so a call costs no task object.
 *
 * <p>Garbage per message: none but one {@link VerbsOp} per one-sided read or write
 * ({@link VerbsOpPool}); answers use reusable {@link VerbsAnswer} slots ({@link VerbsResponder});
 * operations in flight sit in the {@code InflightTable} ({@link VerbsInflight}); rendezvous
 * windows are reused.
 */
final class VerbsConnection implements Connection {
  static final int CONNECTING = 0;
  static final int OPEN = 1;
  static final int CLOSING = 2;
  static final int CLOSED = 3;

  private static final Logger LOG = LoggerFactory.getLogger(VerbsConnection.class);
  /** Regions a peer may revoke on one connection; one more closes it (a revoke flood). */
  static final int MAX_REVOKED = 1024;

  private final VerbsTransport transport;
  private final VerbsEventLoop loop;
  final int connId;
  long cmId;
  private final VerbsListener listener;
  private volatile InetSocketAddress remote;
  volatile int state = CONNECTING;
  /**
   * Regions this side asked the peer to revoke and the peer has not confirmed yet (changed on
   * the loop; concurrent so tests may look).
   */
  private final Set<Long> revoking = ConcurrentHashMap.newKeySet();
  /** Set by {@link #close()} at once, so the caller sees the connection closed on return. */
  private volatile boolean closeRequested;
  private final int maxMessageSize;
  private final long ioTimeoutNanos;

  /** User operations and answers on their way to the loop ({@link VerbsOutbox}). */
  final VerbsOutbox outbox;
  /** Request and message objects for reuse ({@link VerbsOpPool}). */
  final VerbsOpPool ops;
  /** Requests received and not yet answered. */

  // ---- queue pair and its resources (loop) ----
  /** Set-up through rdma_cm and what it reserved ({@link VerbsSetUp}). */
  final VerbsSetUp setUp;
  /** Receive slots and every header slot (the receive ring, {@link VerbsRing}). */
  private final VerbsRing receiveRing;
  /** Posting and send completions ({@link VerbsSendQueue}). */
  private final VerbsSendQueue sendQueue;

  // ---- flow control (loop) ----
  private final VerbsCredits credits = new VerbsCredits();
  private final ArrayDeque<VerbsOp> messageBacklog = new ArrayDeque<>();

  // ---- operations in flight, large messages, what the peer sends (loop) ----
  /** User operations until each ends ({@link VerbsInflight}); its count on any thread. */
  private final VerbsInflight inflightOps;
  /** Large messages, both directions ({@link VerbsRendezvous}). */
  final VerbsRendezvous rendezvous;
  /** Receive completions: checks and dispatch ({@link VerbsInbound}). */
  private final VerbsInbound inbound;
  /** Reads and writes of the peer's regions ({@link VerbsOneSided}). */
  final VerbsOneSided oneSided;

  // ---- test hooks (playing a hostile peer) ----
  /** Tests: sees every rendezvous announcement; false = ignore it (never read, never ack). */
  interface RendezvousTap {
    boolean announced(boolean forResponse, int reqId, int length, int rkey, long address);
  }

  volatile RendezvousTap tap;

  /** Ending the connection, once ({@link VerbsTeardown}). */
  private final VerbsTeardown teardown;
  /** Requests of the peer and this side's answers to them ({@link VerbsResponder}). */
  final VerbsResponder responder;
  /** What the peer may do before it authenticated ({@link VerbsAdmission}). */
  final VerbsAdmission admission;

  VerbsConnection(VerbsTransport transport, int connId, long cmId, VerbsListener listener,
      InetSocketAddress remote) {
    this.transport = transport;
    this.loop = transport.loop();
    this.connId = connId;
    this.cmId = cmId;
    this.listener = listener;
    this.remote = remote;
    int maxInflight = transport.conf().maxInflight();
    this.maxMessageSize = transport.conf().maxMessageSize();
    this.ioTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(transport.conf().ioTimeoutMs());
    int maxRecv = transport.recvDepth();
    int maxSend = VerbsRing.sendDepth(maxInflight, maxRecv);
    this.receiveRing = new VerbsRing(transport, maxRecv);
    this.inflightOps = new VerbsInflight(this, transport, maxInflight);
    this.outbox = new VerbsOutbox(this, loop, maxInflight);
    this.ops = new VerbsOpPool(maxInflight);
    this.rendezvous = new VerbsRendezvous(this, transport, maxInflight, ioTimeoutNanos);
    this.sendQueue = new VerbsSendQueue(this, transport, credits, receiveRing, rendezvous,
        messageBacklog, maxSend);
    this.inbound = new VerbsInbound(this, receiveRing, credits, rendezvous);
    this.setUp = new VerbsSetUp(this, listener != null, credits, receiveRing, sendQueue);
    this.oneSided = new VerbsOneSided(this, inflightOps, inbound, ioTimeoutNanos);
    this.teardown = new VerbsTeardown(this, setUp, receiveRing, sendQueue, rendezvous,
        inflightOps);
    RequestHandler h = listener == null ? null : listener.handler();
    this.admission = new VerbsAdmission(h, ioTimeoutNanos);
    this.responder = new VerbsResponder(this, listener == null ? 1 : maxInflight, admission);
  }

  @Override
  public void trust() {
    admission.trust();
  }

  @Override
  public boolean trusted() {
    return admission.trusted();
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
    return inflightOps.count();
  }

  void checkSize(int length) {
    if (length > maxMessageSize) {
      throw new IllegalArgumentException(length + " bytes exceed hadoop.hpc.transport.max."
          + "message.size=" + maxMessageSize);
    }
  }

  ConnectionClosedException closedNow() {
    return new ConnectionClosedException("verbs connection to " + remote + " is closed");
  }

  @Override
  public boolean request(Buffer request, Completion<Buffer> completion) {
    Objects.requireNonNull(completion, "completion");
    checkSize(request.readableBytes());
    if (!isOpen()) {
      request.release(); // ownership passed to the transport, which cannot send it
      Completions.fail(completion, closedNow());
      return true;
    }
    if (!inflightOps.acquire()) {
      return false;
    }
    Buffer payload = request;
    if (request.pool() != transport.bufferPool()) {
      payload = transport.copyIntoPool(request);
      if (payload == null) {
        inflightOps.unacquire();
        return false;
      }
      request.release();
    }
    VerbsOp op = ops.request();
    op.payload = payload;
    op.completion = completion;
    op.deadlineNanos = System.nanoTime() + ioTimeoutNanos;
    outbox.enqueueOp(op);
    return true;
  }

  @Override
  public boolean read(RemoteRegion region, long offset, int length, Buffer destination,
      Completion<Void> completion) {
    return oneSided.read(region, offset, length, destination, completion);
  }

  @Override
  public boolean write(Buffer source, RemoteRegion region, long offset,
      Completion<Void> completion) {
    return oneSided.write(source, region, offset, completion);
  }

  @Override
  public void respond(long requestId, Buffer response) {
    checkSize(response.readableBytes());
    responder.respond(requestId, response);
  }

  @Override
  public void fail(long requestId, int code, String message) {
    responder.fail(requestId, code, message);
  }

  @Override
  public void close() {
    closeRequested = true;
    loop.submit(() -> closeConnection(new ConnectionClosedException("verbs connection to "
        + remote + " closed locally")));
  }

  /**
   * Tests: sends a message with exactly these header fields (credits as given, not the ones
   * owed), as a hostile or broken peer would.
   */
  void sendRaw(byte type, int flags, int credits, int reqId, int length, int rkey,
      long address) {
    loop.submit(() -> {
      if (state != OPEN) {
        return;
      }
      VerbsOp op = message(type, flags, reqId, null);
      op.rawCredits = credits;
      op.length = length;
      op.rkey = rkey;
      op.address = address;
      messageBacklog.add(op);
      pump();
    });
  }

  /** Tests: rendezvous payloads this side exposes now (windows bound or being invalidated). */
  int exposedWindows() {
    return rendezvous.exposed();
  }

  /** Tests: windows this side has invalidated so far. */
  int localInvalidations() {
    return rendezvous.localInvalidations();
  }

  @Override
  public String toString() {
    return "VerbsConnection[" + connId + ", " + remote + ", state=" + state + ", inflight="
        + inflightOps.count() + "]";
  }

  /** Passive side: the peer's address as rdma_cm has it (messages only). */
  void refreshRemoteAddress() {
    remote = VerbsSetUp.peerAddress(cmId, remote);
  }

  // ======================================================================================
  // Data path (loop)
  // ======================================================================================

  private VerbsOp message(byte type, int flags, int reqId, Buffer payload) {
    return ops.message(type, flags, reqId, payload);
  }

  VerbsTransport transport() {
    return transport;
  }

  /** Queues a message for the peer (sent as credits allow). */
  void queueMessage(VerbsOp op) {
    messageBacklog.add(op);
  }

  /** Queues an RDMA work request (posted as send-queue slots allow). */
  void queueRdma(VerbsOp op) {
    sendQueue.queueRdma(op);
  }

  void startRequest(VerbsOp op) {
    if (state != OPEN) {
      Buffer p = op.payload;
      op.payload = null;
      p.release();
      finishOp(op, null, closeCauseOrDefault());
      return;
    }
    inflightOps.addRequest(op);
    prepare(op, VerbsHeader.REQUEST, VerbsHeader.REQUEST_RNDV, op.payload, false);
    op.messageLive = true;
    messageBacklog.add(op);
    pump();
  }

  /** The request op of {@code reqId}, or null (timed out, unknown). */
  VerbsOp pendingRequest(int reqId) {
    return inflightOps.pendingRequest(reqId);
  }

  /**
   * Makes {@code op} the message carrying {@code payload}: eager, or a rendezvous announcement
   * whose payload stays exposed through a memory window (bound as the announcement is posted)
   * until the transfer is over.
   */
  void prepare(VerbsOp op, byte eager, byte announcement, Buffer payload,
      boolean forResponse) {
    op.flags = 0;
    if (payload.readableBytes() <= VerbsTransport.EAGER_SIZE) {
      op.type = eager;
      op.payload = payload;
      op.length = payload.readableBytes();
      return;
    }
    rendezvous.announce(op, announcement, payload, forResponse);
  }

  /**
   * Tells the peer a region is unexposed; its REVOKE_ACK reaches the transport. A connection
   * still being set up is told too (the message goes once it is open): each side opens on its
   * own ESTABLISHED event, so the peer may already read a region by RDMA while this side's
   * connection is not open yet.
   */
  boolean revoke(long key) {
    if (state != OPEN && state != CONNECTING) {
      return false;
    }
    VerbsOp op = message(VerbsHeader.REVOKE, 0, 0, null);
    op.address = key;
    messageBacklog.add(op);
    revoking.add(key);
    pump();
    return true;
  }

  /**
   * The peer confirmed revoking {@code key}; false when this side never asked it to (or it
   * confirmed twice), which would let it end an {@code unexpose} wait meant for other peers.
   */
  boolean revokeConfirmed(long key) {
    if (!revoking.remove(key)) {
      return false;
    }
    transport.exposures().confirmed(key);
    return true;
  }

  /**
   * The connection's queue pair no longer serves the peer (moved to error or destroyed): every
   * revocation still awaited here counts as confirmed, so {@code unexpose} does not wait for a
   * peer that is gone until the io timeout.
   */
  void releaseRevocations() {
    for (Long key : revoking) {
      if (revoking.remove(key)) {
        transport.exposures().confirmed(key);
      }
    }
  }

  /** Tests: revocations sent on this connection and not confirmed yet. */
  int revocationsAwaited() {
    return revoking.size();
  }

  /** Ends a user operation, once ({@link VerbsInflight#finish}). */
  void finishOp(VerbsOp op, Object result, Throwable failure) {
    inflightOps.finish(op, result, failure);
  }

  /** Posts what credits and send-queue slots allow; returns credits when owed. */
  void pump() {
    if (state != OPEN) {
      return;
    }
    sendQueue.pump();
  }

  /** Posts receive slot i; 0 or -errno. */
  int postReceive(int i) {
    return receiveRing.post(cmId, VerbsSendQueue.wrId(connId, i, true), i);
  }

  /** Delivers receives that waited for pool memory, retries rendezvous reads waiting for it. */
  void maintain() {
    if (state != OPEN) {
      return;
    }
    int held;
    while ((held = receiveRing.firstHeld()) >= 0 && state == OPEN) {
      if (!deliverEager(held)) {
        break;
      }
      receiveRing.released();
    }
    rendezvous.retryWaiting();
    pump();
  }

  void onCompletion(long wrId, int status, int byteLen, int vendorStatus) {
    int slot = (int) (wrId & 0x7fff_ffffL);
    if ((wrId & VerbsSendQueue.RECV_FLAG) != 0) {
      if (status == VerbsNatives.WC_SUCCESS) {
        transport.metrics().received(byteLen);
      }
      inbound.onReceive(slot, status, byteLen, vendorStatus);
    } else {
      sendQueue.onCompletion(slot, status, vendorStatus);
    }
    if (state == CLOSING && teardown.postedWrs() == 0) {
      finish();
    }
  }

  TransportException completionError(int status, int vendorStatus) {
    if (status == VerbsNatives.WC_FLUSHED) {
      return closeCauseOrDefault();
    }
    return new ConnectionClosedException("verbs connection to " + remote + ": work request "
        + "failed: " + VerbsNatives.wcStatusText(vendorStatus));
  }

  /** An RDMA work request will not complete ({@link VerbsInflight#failRdma}). */
  void failRdma(VerbsOp op, Throwable cause) {
    inflightOps.failRdma(op, cause);
  }

  /** True when {@code base + length} (unsigned addresses, length >= 0) passes 2^64. */
  static boolean wraps(long base, long length) {
    return Long.compareUnsigned(base + length, base) < 0;
  }

  /**
   * The peer broke a protocol rule: logged once, here, naming the rule, and the connection is
   * closed (its pool memory returns in {@link #finish}); the transport's other connections are
   * not affected.
   */
  void protocolError(String what) {
    LOG.warn("verbs: closing connection {} (peer {}): protocol violation: {}", connId, remote,
        what);
    closeConnection(new ConnectionClosedException("verbs connection to " + remote
        + " closed: protocol violation by the peer: " + what));
  }

  void repost(int slot) {
    if (state == CLOSING || state == CLOSED) {
      return;
    }
    int rc = postReceive(slot);
    if (rc < 0) {
      closeConnection(new ConnectionClosedException("verbs connection to " + remote
          + ": ibv_post_recv failed: errno " + -rc));
    } else {
      credits.reposted();
    }
  }

  /**
   * Delivers the eager message of a receive slot (its payload copied into a pool buffer) and
   * re-posts the slot. False when the pool has no buffer now: the slot stays held, so its
   * credit is not returned and the peer slows down until memory comes back.
   */
  boolean deliverEager(int slot) {
    ByteBuffer ring = receiveRing.headers(slot);
    int at = VerbsRing.headerAt(slot);
    byte type = VerbsHeader.type(ring, at);
    int reqId = VerbsHeader.reqId(ring, at);
    int length = ring.getInt(at + 24);
    ByteBuffer payload = receiveRing.payload(slot);
    VerbsOp answered = type == VerbsHeader.REQUEST ? null : pendingRequest(reqId);
    Buffer delivered = null;
    TransportException failure = null;
    if (type == VerbsHeader.FAILURE) {
      if (answered != null) {
        failure = RemoteFailureException.fromWire("request to " + remote,
            VerbsHeader.rkey(ring, at),
            StandardCharsets.UTF_8.decode(payload.slice(0, length)).toString());
      }
    } else if (type == VerbsHeader.REQUEST || answered != null) {
      delivered = transport.bufferPool().allocate(length);
      if (delivered == null) {
        return false;
      }
      delivered.nio().put(0, payload, 0, length);
    }
    repost(slot);
    if (answered != null) {
      finishOp(answered, delivered, failure);
    } else if (delivered != null) {
      responder.deliver(reqId, delivered);
    }
    return true;
  }

  // ======================================================================================
  // Timeouts and teardown (loop)
  // ======================================================================================

  void checkTimeouts(long now) {
    if (setUp.connectTimedOut(now) || teardown.graceOver(now) || state != OPEN) {
      return;
    }
    if (admission.overdue(now)) {
      LOG.warn("verbs: {} did not authenticate within {} ms; closing the connection", remote,
          admission.timeoutMs());
      closeConnection(new ConnectionClosedException("verbs connection to " + remote + " closed:"
          + " the peer did not authenticate within " + admission.timeoutMs() + " ms (the"
          + " handler's, else hadoop.hpc.transport.io.timeout)"));
      return;
    }
    rendezvous.expire(now); // the peer neither read nor acknowledged within the io timeout
    VerbsOp expired = inflightOps.expire(now);
    if (expired != null) {
      // A one-sided transfer the HCA has not finished: the QP must go to error (flushing the
      // work request) before its buffer may be reused, so the connection goes down with it.
      if (sendQueue.unqueueRdma(expired)) {
        finishOp(expired, null, inflightOps.timeout(expired));
      }
      closeConnection(inflightOps.timeout(expired));
    }
  }

  TransportException closeCauseOrDefault() {
    return teardown.closeCauseOrDefault();
  }

  /** Starts teardown ({@link VerbsTeardown#close}); later calls do nothing. */
  void closeConnection(Throwable cause) {
    teardown.close(cause);
  }

  /** Destroys the QP and id, then releases every buffer still held (once). */
  void finish() {
    teardown.finish();
  }

  VerbsListener listener() {
    return listener;
  }

  /** The transport's counters. */
  TransportMetrics metrics() {
    return transport.metrics();
  }
}
