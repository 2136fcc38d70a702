/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.nio.channels.FileChannel;

import org.apache.hadoop.io.LongWritable;
import org.apache.hadoop.net.SocketOutputStream;

/**
 * The DataNode's output stream on a transfer stream. It is a {@link SocketOutputStream}, so
 * {@code BlockSender} keeps its {@code transferTo} path and 64 KiB packets; that path reads the
 * block file straight into registered memory ({@link ServerPipe#transferFrom}) instead of the
 * JDK's 8 KiB heap copies for a channel that is not a socket.
 */
final class TransferOutputStream extends SocketOutputStream {
  private final ServerPipe pipe;

  TransferOutputStream(TransferChannel channel, ServerPipe pipe) throws IOException {
    super(channel, 0);
    this.pipe = pipe;
  }

  @Override
  public void transferToFully(FileChannel file, long position, int count,
      LongWritable waitForWritableTime, LongWritable transferToTime) throws IOException {
    long[] waited = new long[1];
    long start = System.nanoTime();
    pipe.transferFrom(file, position, count, () -> {
      long t = System.nanoTime();
      waitForWritable();
      waited[0] += System.nanoTime() - t;
    });
    if (waitForWritableTime != null) {
      waitForWritableTime.set(waited[0]);
    }
    if (transferToTime != null) {
      transferToTime.set(System.nanoTime() - start - waited[0]);
    }
  }
}
