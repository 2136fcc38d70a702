/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;

import org.hadoophpc.net.Buffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: frames go out whole and one after another. A frame, once begun, is written to its
 * last byte (header and payload in one gathering write, then what follows from a file) before
 * the next one starts, and the {@link TcpFrame#CLOSE} frame is written only between frames, so
 * the peer never sees two frames interleaved. This is one connection's writing side: the write
 * queue in order, the frame being written, write interest while the socket is full, and the
 * pool of frames the transport serves itself ({@link ServedFrame}).
 *
 * <p>Belongs to the connection's event loop, as its connection does.
 */
final class TcpOutbound {
  /** The connection's logger: the lines are the connection's. */
  private static final Logger LOG = LoggerFactory.getLogger(TcpConnection.class);
  private static final ByteBuffer EMPTY = ByteBuffer.allocateDirect(0);

  private final TcpConnection conn;
  private final SocketChannel channel;
  private final String peer;
  private SelectionKey key;
  private final ArrayDeque<OutboundFrame> writeQueue = new ArrayDeque<>();
  private final ArrayDeque<ServedFrame> spareFrames = new ArrayDeque<>();
  /** The frame being written; null between frames. */
  private OutboundFrame current;
  /** Header and payload bytes of {@link #current}, counted once it is all out. */
  private long currentBytes;
  private final ByteBuffer outHeader = ByteBuffer.allocateDirect(TcpFrame.HEADER_BYTES);
  private final ByteBuffer[] outVector = new ByteBuffer[2];

  TcpOutbound(TcpConnection conn, SocketChannel channel) {
    this.conn = conn;
    this.channel = channel;
    this.peer = conn.peer();
  }

  void attach(SelectionKey selectionKey) {
    this.key = selectionKey;
  }

  /** Queues a frame behind the others. */
  void add(OutboundFrame frame) {
    writeQueue.add(frame);
  }

  /** A frame is being written or waits to be. */
  boolean hasWork() {
    return current != null || !writeQueue.isEmpty();
  }

  /** True while {@code frame} is the one being written. */
  boolean writing(OutboundFrame frame) {
    return frame == current;
  }

  /** Writes frames until the queue is empty or the socket is full (then waits for OP_WRITE). */
  void flush() throws IOException {
    while (true) {
      if (current == null) {
        OutboundFrame f = writeQueue.poll();
        if (f == null) {
          if ((key.interestOps() & SelectionKey.OP_WRITE) != 0) {
            key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
          }
          return;
        }
        if (f.obsolete()) {
          f.dropped();
          continue;
        }
        ByteBuffer payload = f.start(outHeader);
        currentBytes = TcpFrame.HEADER_BYTES + (long) TcpFrame.payloadLength(outHeader);
        outVector[0] = outHeader;
        outVector[1] = payload == null ? EMPTY : payload;
        current = f;
      }
      channel.write(outVector);
      if (outHeader.hasRemaining() || outVector[1].hasRemaining()
          || !current.transferRest(channel)) {
        if ((key.interestOps() & SelectionKey.OP_WRITE) == 0) {
          key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
        }
        return;
      }
      OutboundFrame f = current;
      current = null;
      outVector[1] = null;
      conn.metrics().sent(currentBytes);
      f.sent();
    }
  }

  /** Queues a frame the transport answers by itself; {@code data}, if any, goes with it. */
  void queueServed(byte type, long opId, Buffer data, String text) {
    ServedFrame f = spareFrames.poll();
    if (f == null) {
      f = new ServedFrame(this);
    }
    writeQueue.add(f.set(type, opId, data, text));
  }

  void recycle(ServedFrame f) {
    if (!conn.finished()) {
      spareFrames.push(f);
    }
  }

  /**
   * Tells the peer with a {@link TcpFrame#CLOSE} frame when the stream is between frames (best
   * effort: one non-blocking write; the peer also notices end of stream).
   */
  void sayClose() {
    if (current == null && channel.isOpen()) {
      TcpFrame.encode(outHeader, TcpFrame.CLOSE, 0, 0, 0, 0, 0);
      try {
        channel.write(outHeader);
      } catch (IOException e) {
        LOG.debug("close frame to {} not sent", peer, e);
      }
    }
  }

  /** Drops (releasing) the frame being written and every queued one; on close. */
  void dropAll() {
    if (current != null) {
      current.dropped();
      current = null;
    }
    OutboundFrame f;
    while ((f = writeQueue.poll()) != null) {
      f.dropped();
    }
    spareFrames.clear();
  }
}
