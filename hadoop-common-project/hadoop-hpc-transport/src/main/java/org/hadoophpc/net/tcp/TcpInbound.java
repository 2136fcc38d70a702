/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.RequestHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: nothing the peer sends is used before it is checked. Every frame header is checked
 * (version, type, payload length against {@code max.message.size}, no payload where none
 * belongs) and, until the handler trusts the peer ({@link Connection#trust()}), only requests
 * and close frames of at most {@link RequestHandler#untrustedRequestBytes()} are admitted, one
 * that fits the read-ahead buffer taking no pooled memory before it has arrived in full; a
 * frame must arrive in full within {@code io.timeout}, and the peer authenticate within the
 * handler's {@link RequestHandler#authenticationTimeoutMs()}; requests are checked against the
 * handler's {@link RequestHandler#maxRequestBytes()} too. A peer
 * breaking a rule is closed with one WARN line naming it. This is one connection's reading
 * side: frames read ahead into a small buffer of its own and copied out (a header and a small
 * payload, and the frames behind them, cost one read), a large payload still to come read
 * straight into its pooled buffer (reading stops while the pool is exhausted or too many
 * requests are unanswered), then dispatch of each complete frame by type.
 *
 * <p>Belongs to the connection's event loop, as its connection does.
 */
final class TcpInbound {
  /** The connection's logger: the lines are the connection's. */
  private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
  /** Socket reads per readiness event before other connections get their turn. */
  private static final int READ_BUDGET = 64;
  /**
   * Bytes read ahead from the socket: a header and a small payload, and the frames behind them,
   * come in one read and are copied out of it (a payload of this size or more that has not
   * arrived yet is read straight into its pooled buffer).
   */
  static final int STAGING_BYTES = 8192;

  private final TcpConnection conn;
  private final TcpEventLoop loop;
  private final SocketChannel channel;
  private final BufferPool pool;
  private final TcpRegionServer regions;
  private final String peer;
  private final int maxMessageSize;
  private final long ioTimeoutNanos;
  /** Most bytes of a request before the peer authenticated (the handler's, see trust()). */
  private final int untrustedMax;
  /** Most bytes of any request (the handler's, within max.message.size). */
  private final int requestMax;
  /** Time the peer has to authenticate. */
  private final long authTimeoutNanos;
  private final long createdNanos = System.nanoTime();

  private SelectionKey key;
  private final ByteBuffer inHeader = ByteBuffer.allocateDirect(TcpFrame.HEADER_BYTES);
  /** Read ahead, not yet parsed (read mode: position to limit); allocated at the first read. */
  private ByteBuffer staging;
  private boolean headerRead;
  private Buffer inPayload;
  /** Not reading: the pool was exhausted (retried by the loop) or too many unanswered. */
  private boolean starved;
  private boolean throttled;
  /** A frame has begun to arrive (its first header byte) and is not complete yet. */
  private boolean inFrame;
  private long frameStartNanos;
  /** The loop watches the socket for reading (false once reads are left to callers). */
  private boolean loopReads = true;
  /** Complete frames dispatched so far. */
  private long dispatched;

  TcpInbound(TcpConnection conn, TcpTransport transport, TcpEventLoop loop,
      SocketChannel channel, TcpOutbound outbound, long ioTimeoutNanos, RequestHandler handler) {
    this.conn = conn;
    this.loop = loop;
    this.channel = channel;
    this.pool = transport.bufferPool();
    this.regions = new TcpRegionServer(conn, transport, outbound);
    this.peer = conn.peer();
    this.maxMessageSize = conn.maxMessageSize();
    this.ioTimeoutNanos = ioTimeoutNanos;
    int untrusted = handler == null ? 0 : handler.untrustedRequestBytes();
    this.untrustedMax = untrusted > 0
        ? Math.min(untrusted, Connection.UNTRUSTED_MAX_MESSAGE_BYTES)
        : Connection.UNTRUSTED_MAX_MESSAGE_BYTES;
    int requests = handler == null ? 0 : handler.maxRequestBytes();
    this.requestMax = requests > 0 ? Math.min(requests, maxMessageSize) : maxMessageSize;
    long auth = handler == null ? 0 : handler.authenticationTimeoutMs();
    this.authTimeoutNanos = auth > 0 ? TimeUnit.MILLISECONDS.toNanos(auth) : ioTimeoutNanos;
  }

  void attach(SelectionKey selectionKey) {
    this.key = selectionKey;
  }

  /** Registered with the loop (the socket is watched). */
  boolean attached() {
    return key != null;
  }

  void onReadable() throws IOException {
    onReadable(Long.MAX_VALUE);
  }

  /**
   * Reads and dispatches complete frames until the socket is (most likely) empty, the read
   * budget is spent, or frames carrying {@code payloadBudget} bytes or more were dispatched: a
   * caller reading for itself stops after a large payload and copies it out while it is still in
   * its core's cache, instead of reading a window of payloads ahead of its copies.
   */
  void onReadable(long payloadBudget) throws IOException {
    long payloads = 0;
    if (staging == null) {
      staging = ByteBuffer.allocateDirect(STAGING_BYTES);
      staging.flip();
    }
    int reads = 0;
    boolean mayRead = true; // false once a read left the socket (most likely) empty
    while (true) {
      if (conn.finished() || starved || throttled) {
        return;
      }
      if (!headerRead) {
        if (conn.answersFull()) {
          throttled = true;
          stopReading();
          return;
        }
        if (!staging.hasRemaining()) {
          if (!mayRead || reads++ >= READ_BUDGET) {
            return;
          }
          int n = fill();
          if (n < 0) {
            conn.closeNow("closed by peer (end of stream)", null, null);
            return;
          }
          if (n == 0) {
            return;
          }
          mayRead = n == STAGING_BYTES;
        }
        if (!inFrame) {
          inFrame = true;
          frameStartNanos = System.nanoTime();
        }
        copyStaged(inHeader);
        if (inHeader.hasRemaining()) {
          continue;
        }
        if (!checkHeader()) {
          return;
        }
        headerRead = true;
      }
      int length = TcpFrame.payloadLength(inHeader);
      byte type = TcpFrame.type(inHeader);
      if (inPayload == null && length > 0 && length <= STAGING_BYTES && !conn.trusted()) {
        // A peer that has not authenticated takes no pooled memory while its frame trickles in:
        // the payload gathers in the read-ahead buffer (this connection's own) until complete.
        while (staging.remaining() < length) {
          if (!mayRead || reads++ >= READ_BUDGET) {
            return;
          }
          staging.compact();
          int room = staging.remaining();
          int n = channel.read(staging);
          staging.flip();
          if (n < 0) {
            conn.closeNow("closed by peer (end of stream in a frame)", null, null);
            return;
          }
          if (n == 0) {
            return;
          }
          mayRead = n == room;
        }
      }
      if (inPayload == null && (length > 0 || type == TcpFrame.REQUEST
          || type == TcpFrame.RESPONSE)) {
        inPayload = pool.allocate(length);
        if (inPayload == null) {
          starve();
          return;
        }
      }
      if (length > 0) {
        ByteBuffer dst = inPayload.nio();
        if (dst.hasRemaining()) {
          copyStaged(dst);
          while (dst.hasRemaining()) {
            int n;
            if (dst.remaining() >= STAGING_BYTES) {
              // Keep reading while the socket has data: a large payload arrives in many pieces,
              // and going back to select for each would cost a system call and a loop turn.
              n = channel.read(dst);
            } else {
              if (!mayRead || reads++ >= READ_BUDGET) {
                return;
              }
              n = fill();
              mayRead = n == STAGING_BYTES;
              copyStaged(dst);
            }
            if (n < 0) {
              conn.closeNow("closed by peer (end of stream in a frame)", null, null);
              return;
            }
            if (n == 0) {
              return;
            }
          }
          dst.flip();
        }
      }
      // Counted before dispatch, which may complete a caller's operation: whoever sees the
      // answer sees its bytes counted. A read request may wait for a buffer and be dispatched
      // again: counted once it went through.
      boolean retriable = type == TcpFrame.READ_REQUEST;
      if (!retriable) {
        conn.metrics().received(TcpFrame.HEADER_BYTES + (long) length);
      }
      if (!dispatch(type)) {
        starve();
        return;
      }
      if (retriable) {
        conn.metrics().received(TcpFrame.HEADER_BYTES + (long) length);
      }
      headerRead = false;
      inFrame = false;
      inHeader.clear();
      dispatched++;
      payloads += length;
      if (payloads >= payloadBudget) {
        return;
      }
    }
  }

  /** Reads into the (empty) staging buffer; the count, 0 when nothing was there, -1 at EOF. */
  private int fill() throws IOException {
    staging.clear();
    int n = channel.read(staging);
    staging.flip();
    return n;
  }

  /** Moves what {@code dst} takes of the staged bytes into it. */
  private void copyStaged(ByteBuffer dst) {
    int k = Math.min(dst.remaining(), staging.remaining());
    if (k > 0) {
      dst.put(dst.position(), staging, staging.position(), k);
      dst.position(dst.position() + k);
      staging.position(staging.position() + k);
    }
  }

  /** Read-ahead bytes wait to be parsed (reading stopped with frames staged). */
  boolean hasStaged() {
    return staging != null && staging.hasRemaining();
  }

  /** Complete frames dispatched so far (a caller that read learns whether it got one). */
  long frames() {
    return dispatched;
  }

  /** Reading waits for the pool or for answers, whoever reads. */
  boolean blocked() {
    return starved || throttled;
  }

  /** The loop stops watching the socket for reading; callers read it (TcpCallerReads). */
  void leaveToCallers() {
    loopReads = false;
    if (key.isValid()) {
      key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
    }
  }

  private boolean checkHeader() {
    byte type = TcpFrame.type(inHeader);
    int length = TcpFrame.payloadLength(inHeader);
    String problem = null;
    if (TcpFrame.version(inHeader) != TcpFrame.VERSION) {
      problem = "protocol version " + TcpFrame.version(inHeader) + ", expected "
          + TcpFrame.VERSION;
    } else if (type < TcpFrame.REQUEST || type > TcpFrame.CLOSE) {
      problem = TcpFrame.name(type);
    } else if (length < 0 || length > maxMessageSize) {
      problem = TcpFrame.name(type) + " of " + length + " bytes (max.message.size is "
          + maxMessageSize + ")";
    } else if (length > 0 && (type == TcpFrame.READ_REQUEST || type == TcpFrame.WRITE_ACK
        || type == TcpFrame.CLOSE)) {
      problem = TcpFrame.name(type) + " with a payload";
    } else if (!conn.trusted() && type != TcpFrame.REQUEST && type != TcpFrame.CLOSE) {
      problem = TcpFrame.name(type) + " from a peer that has not authenticated";
    } else if (!conn.trusted() && length > untrustedMax) {
      problem = TcpFrame.name(type) + " of " + length + " bytes from a peer that has not"
          + " authenticated (at most " + untrustedMax + " before it does)";
    } else if (type == TcpFrame.REQUEST && length > requestMax) {
      problem = "request of " + length + " bytes (its handler takes at most " + requestMax + ")";
    }
    if (problem != null) {
      LOG.warn("protocol error from {}: {}; closing the connection", peer, problem);
      conn.closeNow("protocol error: " + problem, null, null);
      return false;
    }
    return true;
  }

  /** Acts on a complete frame; false when it needs a buffer the pool cannot give yet. */
  private boolean dispatch(byte type) {
    long opId = TcpFrame.opId(inHeader);
    switch (type) {
      case TcpFrame.REQUEST:
        conn.onRequest(opId, takePayload());
        return true;
      case TcpFrame.RESPONSE: {
        Buffer b = takePayload();
        TcpOp op = conn.takeOp(opId, TcpFrame.REQUEST);
        if (op == null || op.isDone()) {
          b.release();
        } else {
          op.finish(b, null);
        }
        return true;
      }
      case TcpFrame.ERROR: {
        int code = TcpFrame.errorCode(inHeader);
        Buffer b = takePayload();
        String text = b == null ? "" : StandardCharsets.UTF_8.decode(b.nio()).toString();
        if (b != null) {
          b.release();
        }
        TcpOp op = conn.takeOp(opId, (byte) 0);
        if (op != null && !op.isDone()) {
          op.finish(null, RemoteFailureException.fromWire(op.describe(), code, text));
        }
        return true;
      }
      case TcpFrame.READ_REQUEST:
        return regions.serveRead(opId, TcpFrame.key(inHeader), TcpFrame.offset(inHeader),
            TcpFrame.readLength(inHeader));
      case TcpFrame.READ_RESPONSE: {
        Buffer b = takePayload();
        TcpOp op = conn.takeOp(opId, TcpFrame.READ_REQUEST);
        if (op != null && !op.isDone()) {
          if (b != null) {
            ByteBuffer dst = op.destination().nio();
            int len = b.readableBytes();
            dst.put(dst.position(), b.nio(), 0, len);
            dst.position(dst.position() + len);
          }
          op.finish(null, null);
        }
        if (b != null) {
          b.release();
        }
        return true;
      }
      case TcpFrame.WRITE_REQUEST: {
        Buffer data = takePayload();
        regions.serveWrite(opId, TcpFrame.key(inHeader), TcpFrame.offset(inHeader), data);
        return true;
      }
      case TcpFrame.WRITE_ACK: {
        TcpOp op = conn.takeOp(opId, TcpFrame.WRITE_REQUEST);
        if (op != null) {
          op.finish(null, null);
        }
        return true;
      }
      default:
        conn.closeNow("closed by peer", null, null);
        return true;
    }
  }

  private Buffer takePayload() {
    Buffer b = inPayload;
    inPayload = null;
    return b;
  }

  /** Releases a payload being read; on close. */
  void dropPayload() {
    if (inPayload != null) {
      inPayload.release();
      inPayload = null;
    }
  }

  private void starve() {
    starved = true;
    stopReading();
    if (loopReads || loop.inLoop()) {
      loop.starved(conn); // a reading caller retries by itself (TcpCallerReads)
    }
  }

  /** Reads again if starved (the loop retries on each turn); false if it was not starved. */
  boolean unstarve() {
    if (!starved) {
      return false;
    }
    starved = false;
    resumeReading();
    return true;
  }

  /** Reads again if throttled: the handler has fewer requests unanswered than its limit. */
  /** Reading stopped because the handler holds as many unanswered requests as it may. */
  boolean throttled() {
    return throttled;
  }

  void unthrottle() {
    if (throttled) {
      throttled = false;
      resumeReading();
    }
  }

  private void stopReading() {
    if (loopReads && key.isValid()) {
      key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
    }
  }

  private void resumeReading() {
    if (loopReads && !starved && !throttled && key.isValid()) {
      key.interestOps(key.interestOps() | SelectionKey.OP_READ);
    }
  }

  /**
   * Closes the connection of a peer that stalled in a frame or did not authenticate within
   * {@code io.timeout}; true if it did.
   */
  boolean overdue(long now) {
    if (inFrame && now - frameStartNanos >= ioTimeoutNanos) {
      LOG.warn("{} sent part of a frame and nothing more for {} ms; closing the connection", peer,
          TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos));
      conn.closeNow("a frame did not arrive in full within the i/o timeout"
          + " (hadoop.hpc.transport.io.timeout)", null, null);
      return true;
    }
    if (!conn.trusted() && now - createdNanos >= authTimeoutNanos) {
      LOG.warn("{} did not authenticate within {} ms; closing the connection", peer,
          TimeUnit.NANOSECONDS.toMillis(authTimeoutNanos));
      conn.closeNow("the peer did not authenticate within "
          + TimeUnit.NANOSECONDS.toMillis(authTimeoutNanos) + " ms (the handler's, else"
          + " hadoop.hpc.transport.io.timeout)", null, null);
      return true;
    }
    return false;
  }
}
