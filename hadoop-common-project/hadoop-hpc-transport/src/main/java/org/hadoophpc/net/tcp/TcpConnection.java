/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.FileSpan;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportMetrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One TCP connection of a {@link TcpTransport}, owned by one {@link TcpEventLoop}.
 *
 * <p>Threading: the public methods may be called from any thread. Everything else (socket,
 * operation slots, frame state) is guarded by {@link #io}, which the loop holds whenever it works
 * on this connection; a caller finding the connection idle writes its frame itself
 * ({@link TcpWriteLock}), else it hands the frame to the loop through {@link TcpOutbox}, a
 * bounded queue. Either way frames leave in order.
 *
 * <p>Buffers: incoming payloads are read straight into pooled buffers; when the pool is
 * exhausted the connection stops reading (TCP flow control pushes back on the peer) and the loop
 * retries. Outgoing frames are a reused header plus the caller's buffer, written with one
 * gathering write.
 *
 * <p>No garbage per message in steady state: operations ({@link TcpOp}) come from a small
 * per-connection pool, received requests use reusable {@link TcpResponder} slots
 * ({@link TcpAnswers}), frames the transport serves itself are pooled
 * ({@link ServedFrame}); the callback forms of the data-plane calls allocate nothing.
 *
 * <p>This class is the endpoint (API, teardown); one protocol rule per part, each made once per
 * connection: {@link TcpInflight} (operations in flight and their deadlines), {@link TcpAnswers}
 * (each request answered once, within the size limit), {@link TcpInbound}
 * (every check of what the peer sends, then dispatch), {@link TcpRegionServer} (the peer's
 * one-sided reads and writes against exposed regions), {@link TcpOutbound} (frames out whole,
 * one after another), {@link TcpCallerReads} (who reads once reads are left to callers).
 */
final class TcpConnection implements Connection {
  private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);

  private final TcpTransport transport;
  private final TcpEventLoop loop;
  private final SocketChannel channel;
  private final RequestHandler handler;
  private final InetSocketAddress remote;
  private final String peer;
  private final int maxInflight;
  private final int maxMessageSize;

  /** How a caller's frame leaves: written now by the caller, or queued for the loop. */
  private final TcpOutbox outbox;
  /** Received requests and their answers. */
  private final TcpAnswers answers;
  private final AtomicBoolean scheduled = new AtomicBoolean();
  private volatile boolean open = true;
  /** Guards the state below: held by the loop while it works here, by a caller writing now. */
  private final TcpWriteLock io = new TcpWriteLock();

  // State guarded by io (the loop's, and a writing caller's).
  private SelectionKey key;
  private boolean finished;
  /** Operations in flight: places and pooled objects (any thread), slots, ids, deadlines. */
  private final TcpInflight inflight;
  /** Requests handed to the handler and not yet answered (their answers not yet dequeued). */
  private int unanswered;
  /** False until the handler trusts the peer (handlers that authenticate; see trust()). */
  private volatile boolean trusted;
  /** Writing of frames, one whole frame after another. */
  private final TcpOutbound outbound;
  /** Reading, checking and dispatch of what the peer sends. */
  private final TcpInbound inbound;
  /** Runs once when this accepted connection closes (its listener's count per address). */
  private volatile Runnable onClosed;
  /** Who reads once reads are left to callers. */
  private final TcpCallerReads callerReads;

  TcpConnection(TcpTransport transport, TcpEventLoop loop, SocketChannel channel,
      RequestHandler handler, InetSocketAddress remote) {
    this.transport = transport;
    this.loop = loop;
    this.channel = channel;
    this.handler = handler;
    this.remote = remote;
    this.peer = String.valueOf(remote);
    this.maxInflight = transport.conf().maxInflight();
    this.maxMessageSize = transport.conf().maxMessageSize();
    long ioTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(transport.conf().ioTimeoutMs());
    this.inflight = new TcpInflight(this, maxInflight, ioTimeoutNanos);
    this.outbox = new TcpOutbox(this, io, inflight, maxInflight);
    this.answers = new TcpAnswers(this, handler == null ? 1 : maxInflight, maxMessageSize);
    this.trusted = handler == null || !handler.authenticates();
    this.outbound = new TcpOutbound(this, channel);
    this.inbound = new TcpInbound(this, transport, loop, channel, outbound, ioTimeoutNanos,
        handler);
    this.callerReads = new TcpCallerReads(this, channel, io, inbound);
  }

  /** The transport's counters (bytes, failures). */
  TransportMetrics metrics() {
    return transport.metrics();
  }

  @Override
  public void trust() {
    trusted = true;
  }

  @Override
  public boolean trusted() {
    return trusted;
  }

  /** Requests the handler may hold unanswered before reading stops. */
  private int answerLimit() {
    return trusted ? maxInflight : 1;
  }

  /** Reading stops: the handler holds as many unanswered requests as it may. Loop thread. */
  boolean answersFull() {
    return handler != null && unanswered >= answerLimit();
  }

  /** Called by the loop once the channel is registered for reading. */
  void attach(SelectionKey selectionKey) {
    this.key = selectionKey;
    transport.metrics().opened(); // counted once registered: closeNow then counts its close
    outbound.attach(selectionKey);
    inbound.attach(selectionKey);
    if (handler != null) {
      handler.onConnect(this); // accepted by a listener (connections we open have no handler)
    }
  }

  String peer() {
    return peer;
  }

  int maxMessageSize() {
    return maxMessageSize;
  }

  @Override
  public InetSocketAddress remoteAddress() {
    return remote;
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public int inFlight() {
    return inflight.count();
  }

  // ---------------------------------------------------------------- any thread

  @Override
  public boolean request(Buffer request, Completion<Buffer> completion) {
    Objects.requireNonNull(completion, "completion");
    checkSize("request", request.readableBytes());
    if (!open) {
      request.release();
      Completions.fail(completion, closedNow("request"));
      return true;
    }
    return submit(TcpFrame.REQUEST, request, 0, 0, 0, completion);
  }

  @Override
  public int request(Buffer[] requests, int count, Completion<Buffer> completion) {
    Objects.requireNonNull(completion, "completion");
    return requestAll(requests, count, completion, null);
  }

  @Override
  public int request(Buffer[] requests, Completion<Buffer>[] completions, int count) {
    for (int i = 0; i < count; i++) {
      Objects.requireNonNull(completions[i], "completion");
    }
    return requestAll(requests, count, null, completions);
  }

  /** Requests answered through {@code completion}, or each through its own of {@code each}. */
  private int requestAll(Buffer[] requests, int count, Completion<Buffer> completion,
      Completion<Buffer>[] each) {
    for (int i = 0; i < count; i++) {
      checkSize("request", requests[i].readableBytes());
    }
    if (!open) {
      for (int i = 0; i < count; i++) {
        requests[i].release();
        Completions.fail(each == null ? completion : each[i], closedNow("request"));
      }
      return count;
    }
    TcpOp[] ops = new TcpOp[count];
    int n = inflight.startRequests(requests, count, completion, each, ops);
    outbox.send(ops, n);
    return n;
  }

  @Override
  public boolean read(RemoteRegion region, long offset, int length, Buffer destination,
      Completion<Void> completion) {
    Objects.requireNonNull(completion, "completion");
    if (length < 0) {
      throw new IllegalArgumentException("negative read length " + length);
    }
    checkSize("read", length);
    if (destination.readableBytes() < length) {
      throw new IllegalArgumentException("read of " + length + " bytes into a destination with "
          + destination.readableBytes() + " bytes between position and limit");
    }
    if (!open) {
      Completions.fail(completion, closedNow("read"));
      return true;
    }
    return submit(TcpFrame.READ_REQUEST, destination, region.key(), offset, length, completion);
  }

  @Override
  public boolean write(Buffer source, RemoteRegion region, long offset,
      Completion<Void> completion) {
    Objects.requireNonNull(completion, "completion");
    checkSize("write", source.readableBytes());
    if (!open) {
      Completions.fail(completion, closedNow("write"));
      return true;
    }
    return submit(TcpFrame.WRITE_REQUEST, source, region.key(), offset, source.readableBytes(),
        completion);
  }

  @Override
  public void respond(long requestId, Buffer response) {
    answers.respond(requestId, response);
  }

  @Override
  public void respond(long[] requestIds, Buffer[] responses, int count) {
    answers.respond(requestIds, responses, count);
  }

  @Override
  public boolean respondsFromFiles() {
    return true;
  }

  @Override
  public boolean respondFile(long requestId, FileChannel file, long position, int length) {
    return respondFile(requestId, null, file, position, length, null);
  }

  @Override
  public boolean respondFile(long requestId, Buffer head, FileChannel file, long position,
      int length, Completion<Void> done) {
    answers.respondFile(requestId, head, file, position, length, done);
    return true;
  }

  @Override
  public boolean respondFiles(long requestId, List<FileSpan> spans) {
    answers.respondFiles(requestId, spans);
    return true;
  }

  @Override
  public void fail(long requestId, int code, String message) {
    answers.fail(requestId, code, message);
  }

  @Override
  public void close() {
    if (!open) {
      return;
    }
    open = false;
    if (loop.inLoop()) {
      closeLocally("closed locally");
    } else if (!callerReads.closeOnCaller()) {
      schedule();
    }
  }

  @Override
  public boolean leaveReadsToCallers() {
    return callerReads.start();
  }

  @Override
  public boolean readOnCaller(long timeoutNanos) {
    return callerReads.read(timeoutNanos);
  }

  @Override
  public void wakeReader() {
    callerReads.wakeup();
  }

  /** A claimed answer goes out (or is dropped when closed); any thread. */
  void send(TcpResponder responder) {
    if (!open) {
      responder.dropped();
      return;
    }
    outbox.send(responder);
  }

  /** Claimed answers go out together (or are dropped when closed); any thread. */
  void send(TcpResponder[] responders, int count) {
    if (count == 0) {
      return;
    }
    if (!open) {
      for (int i = 0; i < count; i++) {
        responders[i].dropped();
      }
      return;
    }
    outbox.send(responders, count);
  }

  private void checkSize(String what, int bytes) {
    if (bytes > maxMessageSize) {
      throw new IllegalArgumentException(what + " of " + bytes + " bytes to " + peer
          + " exceeds hadoop.hpc.transport.max.message.size=" + maxMessageSize);
    }
  }

  private ConnectionClosedException closedNow(String what) {
    return new ConnectionClosedException(what + " on connection to " + peer
        + ": connection is closed");
  }

  /** Reserves an in-flight place and hands a pooled operation to the loop; false if none. */
  private boolean submit(byte type, Buffer buffer, long key, long offset, int length,
      Completion<?> completion) {
    TcpOp op = inflight.start(type, buffer, key, offset, length, completion);
    if (op == null) {
      return false;
    }
    outbox.send(op);
    return true;
  }

  /** Nothing queued for the loop or being written, and open: a caller may write now. */
  boolean idleForCaller() {
    return !finished && open && outbox.isEmpty() && !outbound.hasWork();
  }

  /**
   * A caller's frame, written under the lock; true when the loop must look at the connection
   * afterwards (the frame left half written, reading to resume).
   */
  boolean writeByCaller(OutboundFrame frame) throws IOException {
    boolean handToLoop = add(frame);
    outbound.flush();
    return handToLoop || outbound.hasWork();
  }

  /** {@link #writeByCaller(OutboundFrame)} of several frames, in one gathering write. */
  boolean writeByCaller(OutboundFrame[] frames, int count) throws IOException {
    boolean handToLoop = false;
    for (int i = 0; i < count; i++) {
      handToLoop |= add(frames[i]);
    }
    outbound.flush();
    return handToLoop || outbound.hasWork();
  }

  private boolean add(OutboundFrame frame) {
    boolean handToLoop = false;
    if (frame instanceof TcpOp op) {
      inflight.add(op); // before the write: the answer may be read the moment the lock goes
    } else if (frame instanceof TcpResponder) {
      unanswered--;
      // the loop may have stopped reading at the limit: it resumes when scheduled
      handToLoop = inbound.throttled() && unanswered < answerLimit();
    }
    outbound.add(frame);
    return handToLoop;
  }

  /** A file answer is over: tells its completion (after unlocking when a caller wrote it). */
  void fileDone(Completion<Void> done, ConnectionClosedException notSent) {
    io.fileDone(done, notSent);
  }

  /** An operation and its frame are both over: keep the object for a later call. */
  void recycle(TcpOp op) {
    inflight.recycle(op);
  }

  /** An answer's frame went out or was dropped: its slot may serve another request. */
  void answerGone(TcpResponder r) {
    if (io.heldByMe() && !finished) {
      answers.recycle(r);
    }
  }

  void schedule() {
    if (!scheduled.getAndSet(true)) {
      loop.ready(this);
    }
  }

  // ---------------------------------------------------------------- loop thread

  /** The connection's lock: the loop holds it around each call into the connection. */
  TcpWriteLock io() {
    return io;
  }

  /** The loop picked this connection from its ready queue. */
  void onScheduled() {
    scheduled.set(false);
    if (!open || finished) {
      closeLocally("closed locally");
      return;
    }
    try {
      IOException broken = io.brokenBy();
      if (broken != null) {
        throw broken;
      }
      drainOutbox();
      outbound.flush();
      if (inbound.hasStaged() && !inbound.blocked()) {
        inbound.onReadable(); // frames read ahead while reading was throttled: no event brings them
      }
    } catch (IOException e) {
      died(e);
    }
  }

  private void drainOutbox() {
    OutboundFrame f;
    while ((f = outbox.poll()) != null) {
      if (f instanceof TcpOp op) {
        inflight.add(op);
      } else if (f instanceof TcpResponder) {
        unanswered--;
      }
      outbound.add(f);
    }
    if (unanswered < answerLimit()) {
      inbound.unthrottle();
    }
  }

  /** Readiness of the channel. */
  void onReady(int readyOps) {
    try {
      if ((readyOps & SelectionKey.OP_READ) != 0) {
        inbound.onReadable();
      }
      if (!finished && outbound.hasWork()) {
        outbound.flush();
      }
    } catch (IOException e) {
      died(e);
    }
  }

  /** Closed: a loop-thread check. */
  boolean finished() {
    return finished;
  }

  void died(IOException e) {
    closeNow("peer died or the connection broke: " + e.getMessage(), e, null);
  }

  /** A request arrived: to the handler, or refused when this side has none. */
  void onRequest(long opId, Buffer request) {
    if (handler == null) {
      request.release();
      outbound.queueServed(TcpFrame.ERROR, opId, null, "no request handler on " + localAddress()
          + ": this side of the connection only makes requests");
      return;
    }
    unanswered++;
    answers.dispatch(opId, request, handler);
  }

  String localAddress() {
    try {
      return String.valueOf(channel.getLocalAddress());
    } catch (IOException e) {
      return "(closed socket)";
    }
  }

  /** The operation answered by {@code opId}, retired from its slot; null if unknown or late. */
  TcpOp takeOp(long opId, byte expectedType) {
    return inflight.take(opId, expectedType);
  }

  /** The loop retries a starved connection (pool exhausted) on each turn. */
  void retryRead() {
    if (finished || !inbound.unstarve()) {
      return;
    }
    try {
      inbound.onReadable();
      if (!finished && outbound.hasWork()) {
        outbound.flush();
      }
    } catch (IOException e) {
      died(e);
    }
  }

  /** Fails operations past their deadline; a stalled frame closes the connection. */
  void sweep(long now) {
    if (finished || inbound.overdue(now)) {
      return;
    }
    if (!callerReads.onSweep() || finished) {
      return;
    }
    TcpOp stalled = inflight.expire(now, outbound);
    if (stalled != null) {
      closeNow("a frame could not be written within the i/o timeout", null, stalled);
    }
  }

  /**
   * Closes on the loop thread after telling the peer with a {@link TcpFrame#CLOSE} frame when
   * the stream is between frames (best effort: one non-blocking write; the peer also notices
   * end of stream).
   */
  void closeLocally(String reason) {
    io.lock();
    try {
      if (!finished) {
        outbound.sayClose();
      }
      closeNow(reason, null, null);
    } finally {
      io.unlock();
    }
  }

  /**
   * Closes on the loop thread: stops I/O, drops (releasing) every frame and buffer, then fails
   * every operation ({@code timedOut} with a timeout, the rest with
   * {@link ConnectionClosedException}) and tells the handler. Frames go before futures so that
   * no callback sees a buffer the transport still touches. Idempotent; later calls only drain
   * what raced into the outbox.
   */
  void closeNow(String reason, Throwable cause, TcpOp timedOut) {
    open = false;
    if (finished) {
      outbox.fail(reason, cause);
      return;
    }
    finished = true;
    if (key != null) {
      transport.metrics().closed();
    }
    if (loop.inLoop()) {
      loop.forget(this); // else its sweep drops it
    }
    if (key != null) {
      key.cancel();
    }
    callerReads.close();
    try {
      channel.close();
    } catch (IOException e) {
      LOG.debug("closing the socket to {}", peer, e);
    }
    outbound.dropAll();
    inbound.dropPayload();
    inflight.failAll(reason, cause, timedOut);
    failOutbox(reason, cause);
    LOG.debug("connection to {} closed: {}", peer, reason);
    released();
    if (handler != null) {
      try {
        handler.onClose(this);
      } catch (RuntimeException e) {
        LOG.warn("request handler failed in onClose for {}", peer, e);
      }
    }
  }

  /** Sets what runs once when this accepted connection closes; before it is registered. */
  void onClosed(Runnable r) {
    onClosed = r;
  }

  /** Runs {@link #onClosed(Runnable)}'s action, once: closed, or never registered. Loop. */
  void released() {
    Runnable r = onClosed;
    onClosed = null;
    if (r != null) {
      r.run();
    }
  }

  /** Drops whatever is (or raced) into the outbox of a closed connection; any thread. */
  void failOutbox(String reason, Throwable cause) {
    outbox.fail(reason, cause);
  }

  @Override
  public String toString() {
    return "TcpConnection[" + peer + (open ? "" : ", closed") + ", inFlight=" + inflight.count()
        + "]";
  }
}
