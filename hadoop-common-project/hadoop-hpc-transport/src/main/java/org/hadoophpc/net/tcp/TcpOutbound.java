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
 * last byte (header and payload, then what follows from a file) before the next one's bytes
 * start (several small frames share one gathering write), and the {@link TcpFrame#CLOSE} frame
 * is written only between frames, so the peer never sees two frames interleaved. This is one
 * connection's writing side: the write queue in order, the frames being written, write interest
 * while the socket is full, and the pool of frames the transport serves itself
 * ({@link ServedFrame}).
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
  /** Frames one gathering write takes at most (two buffers each: header and payload). */
  static final int GATHER = 16;
  /** The frames being written, in order: [done, started) are not all out yet; none between. */
  private final OutboundFrame[] batch = new OutboundFrame[GATHER];
  /** Header and payload bytes of each frame of {@link #batch}, counted once it is all out. */
  private final long[] batchBytes = new long[GATHER];
  private final ByteBuffer[] headers = new ByteBuffer[GATHER];
  private final ByteBuffer[] outVector = new ByteBuffer[2 * GATHER];
  private int started;
  private int done;

  TcpOutbound(TcpConnection conn, SocketChannel channel) {
    this.conn = conn;
    this.channel = channel;
    this.peer = conn.peer();
    for (int i = 0; i < GATHER; i++) {
      headers[i] = ByteBuffer.allocateDirect(TcpFrame.HEADER_BYTES);
    }
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
    return started > 0 || !writeQueue.isEmpty();
  }

  /** True while {@code frame} is being written (begun, or gathered into the write under way). */
  boolean writing(OutboundFrame frame) {
    for (int i = done; i < started; i++) {
      if (batch[i] == frame) {
        return true;
      }
    }
    return false;
  }

  /**
   * Writes frames until the queue is empty or the socket is full (then waits for OP_WRITE).
   * Up to {@link #GATHER} queued frames go in one gathering write (so a batch of small frames
   * costs one system call); a frame whose bytes follow from a file ends its batch, and its file
   * bytes go after its header and payload.
   */
  void flush() throws IOException {
    while (true) {
      if (started == 0 && !gather()) {
        if ((key.interestOps() & SelectionKey.OP_WRITE) != 0) {
          key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
        }
        return;
      }
      channel.write(outVector, 2 * done, 2 * (started - done));
      while (done < started) {
        OutboundFrame f = batch[done];
        if (headers[done].hasRemaining() || outVector[2 * done + 1].hasRemaining()
            || !f.transferRest(channel)) {
          if ((key.interestOps() & SelectionKey.OP_WRITE) == 0) {
            key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
          }
          return;
        }
        batch[done] = null;
        outVector[2 * done + 1] = null;
        done++;
        conn.metrics().sent(batchBytes[done - 1]);
        f.sent();
      }
      started = 0;
      done = 0;
    }
  }

  /** Begins the next frames of the queue; false when there are none. */
  private boolean gather() {
    while (started < GATHER) {
      OutboundFrame f = writeQueue.poll();
      if (f == null) {
        break;
      }
      if (f.obsolete()) {
        f.dropped();
        continue;
      }
      ByteBuffer header = headers[started];
      ByteBuffer payload = f.start(header);
      batchBytes[started] = TcpFrame.HEADER_BYTES + (long) TcpFrame.payloadLength(header);
      outVector[2 * started] = header;
      outVector[2 * started + 1] = payload == null ? EMPTY : payload;
      batch[started++] = f;
      if (f.followsFromFile()) {
        break; // its file bytes go after it: nothing may be gathered behind it
      }
    }
    return started > 0;
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
    if (started == 0 && channel.isOpen()) {
      ByteBuffer header = headers[0];
      TcpFrame.encode(header, TcpFrame.CLOSE, 0, 0, 0, 0, 0);
      try {
        channel.write(header);
      } catch (IOException e) {
        LOG.debug("close frame to {} not sent", peer, e);
      }
    }
  }

  /** Drops (releasing) the frame being written and every queued one; on close. */
  void dropAll() {
    for (int i = done; i < started; i++) {
      batch[i].dropped();
      batch[i] = null;
      outVector[2 * i + 1] = null;
    }
    started = 0;
    done = 0;
    OutboundFrame f;
    while ((f = writeQueue.poll()) != null) {
      f.dropped();
    }
    spareFrames.clear();
  }
}
