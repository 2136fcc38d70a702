/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.net.SocketOutputStream;

/**
 * The DataNode's output stream on a transfer stream. It is a {@link SocketOutputStream}, so
 * {@code BlockSender} keeps its {@code transferTo} path and 64 KiB packets. That path sends
 * each packet as one message ({@link ServerPipe#transferFrom}): once a block is being sent
 * with {@code transferToFully}, the small write before each call (the packet's header and
 * checksums) is held and goes out in front of the file bytes; the file bytes go by
 * {@code sendfile} where the transport can, else straight into registered memory, never the
 * JDK's 8 KiB heap copies for a channel that is not a socket. {@code flush()} (which
 * {@code BlockSender} calls after a block's last packet, before it closes the block file)
 * sends what is held and waits until the transport is done with the block file. Where the
 * transport sends files itself and the client takes them (tcp), up to
 * {@link #PACKETS_PER_ANSWER} packets of contiguous file bytes go in one answer: a packet is held
 * until that many are, or anything else is written (BlockSender ends every range with an empty
 * packet), or {@code flush()}.
 */
final class TransferOutputStream extends SocketOutputStream {
  /** Most bytes held for the next packet: a header and the checksums of 64 KiB (CRC32C: 512). */
  private static final int HOLD_MAX = 4096;

  /**
   * Packets sent in one answer where {@link ServerPipe#sendsPackets} (tcp): 4 x 64 KiB. Each
   * answer costs both ends a thread hand-off and the client a PULL; measured with 1 packet per
   * answer, about 0.8 context switches per packet against stock's 0.1.
   */
  static final int PACKETS_PER_ANSWER = 4;

  private final ServerPipe pipe;
  private final ByteBuffer held = ByteBuffer.allocate(HOLD_MAX);
  /** Packets not sent yet (their heads, lengths, and where their data starts in the file). */
  private final ByteBuffer heads = ByteBuffer.allocate(PACKETS_PER_ANSWER * HOLD_MAX);
  private final int[] headLengths = new int[PACKETS_PER_ANSWER];
  private final int[] dataLengths = new int[PACKETS_PER_ANSWER];
  private int pending;
  private FileChannel pendingFile;
  private long pendingPosition;
  private long pendingEnd;
  /** Time this stream waited for room since the current transferToFully began. */
  private long waitedNanos;
  /** Waits for room with the stock write timeout, adding the time to {@link #waitedNanos}. */
  private final ServerPipe.Waiter waiter = () -> {
    long t = System.nanoTime();
    waitForWritable();
    waitedNanos += System.nanoTime() - t;
  };
  /** Between a transferToFully and the next flush: small writes are held. */
  private boolean holding;
  private long timeoutMs;

  TransferOutputStream(TransferChannel channel, ServerPipe pipe) throws IOException {
    super(channel, 0);
    this.pipe = pipe;
  }

  @Override
  public void setTimeout(int timeoutMs) {
    super.setTimeout(timeoutMs);
    this.timeoutMs = timeoutMs;
  }

  @Override
  public void write(byte[] b, int off, int len) throws IOException {
    if (holding && held.position() == 0 && len <= HOLD_MAX) {
      held.put(b, off, len);
      return;
    }
    sendPending();
    sendHeld();
    super.write(b, off, len);
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    sendPending();
    sendHeld();
    return super.write(src);
  }

  @Override
  public void transferToFully(FileChannel file, long position, int count,
      LongWritable waitForWritableTime, LongWritable transferToTime) throws IOException {
    long start = System.nanoTime();
    waitedNanos = 0;
    if (pipe.sendsPackets() && count >= ServerPipe.SENDFILE_MIN && count <= pipe.chunk()) {
      // held until PACKETS_PER_ANSWER packets of contiguous file bytes are, or anything else
      // is written, or flush()
      if (pending > 0 && (file != pendingFile || position != pendingEnd)) {
        sendPending();
      }
      if (pending == 0) {
        pendingFile = file;
        pendingPosition = position;
        pendingEnd = position;
      }
      held.flip();
      headLengths[pending] = held.remaining();
      heads.put(held);
      held.clear();
      dataLengths[pending] = count;
      pendingEnd += count;
      pending++;
      if (pending == PACKETS_PER_ANSWER) {
        sendPending();
      }
    } else {
      sendPending();
      held.flip();
      try {
        pipe.transferFrom(file, position, count, held, waiter);
      } finally {
        held.clear();
      }
    }
    long waited = waitedNanos;
    holding = true;
    if (waitForWritableTime != null) {
      waitForWritableTime.set(waited);
    }
    if (transferToTime != null) {
      transferToTime.set(System.nanoTime() - start - waited);
    }
  }

  /** Sends what is held and waits until the transport no longer needs the block file. */
  @Override
  public void flush() throws IOException {
    sendPending();
    sendHeld();
    holding = false;
    pipe.awaitFilesSent(timeoutMs);
    super.flush();
  }

  /** Sends the packets held for one answer, if any. */
  private void sendPending() throws IOException {
    if (pending == 0) {
      return;
    }
    heads.flip();
    try {
      pipe.transferPackets(pendingFile, pendingPosition, heads, headLengths, dataLengths,
          pending, waiter);
    } finally {
      heads.clear();
      pending = 0;
      pendingFile = null;
    }
  }

  private void sendHeld() throws IOException {
    if (held.position() == 0) {
      return;
    }
    held.flip();
    try {
      while (held.hasRemaining()) {
        super.write(held);
      }
    } finally {
      held.clear();
    }
  }
}
