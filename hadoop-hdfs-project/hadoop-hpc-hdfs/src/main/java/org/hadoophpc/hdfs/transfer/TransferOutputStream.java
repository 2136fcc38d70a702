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
 * sends what is held and waits until the transport is done with the block file.
 */
final class TransferOutputStream extends SocketOutputStream {
  /** Most bytes held for the next packet: a header and the checksums of 64 KiB (CRC32C: 512). */
  private static final int HOLD_MAX = 4096;

  private final ServerPipe pipe;
  private final ByteBuffer held = ByteBuffer.allocate(HOLD_MAX);
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
    sendHeld();
    super.write(b, off, len);
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    sendHeld();
    return super.write(src);
  }

  @Override
  public void transferToFully(FileChannel file, long position, int count,
      LongWritable waitForWritableTime, LongWritable transferToTime) throws IOException {
    long[] waited = new long[1];
    long start = System.nanoTime();
    held.flip();
    try {
      pipe.transferFrom(file, position, count, held, () -> {
        long t = System.nanoTime();
        waitForWritable();
        waited[0] += System.nanoTime() - t;
      });
    } finally {
      held.clear();
    }
    holding = true;
    if (waitForWritableTime != null) {
      waitForWritableTime.set(waited[0]);
    }
    if (transferToTime != null) {
      transferToTime.set(System.nanoTime() - start - waited[0]);
    }
  }

  /** Sends what is held and waits until the transport no longer needs the block file. */
  @Override
  public void flush() throws IOException {
    sendHeld();
    holding = false;
    pipe.awaitFilesSent(timeoutMs);
    super.flush();
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
