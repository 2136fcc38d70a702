/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.hdfs.net.Peer;
import org.apache.hadoop.hdfs.net.PeerServer;

/**
 * Hands accepted transfer streams to the DataNode's second (stock) {@code DataXceiverServer}.
 * Streams are accepted by the transport (a HELLO) into a bounded queue; {@link #accept()} waits
 * at most a second and, when nothing came, throws {@link SocketTimeoutException}, the one
 * exception the stock accept loop ignores: any other would close the previous peer, and a
 * runtime exception would stop the whole DataNode. An interrupt is reported the same way.
 */
final class TransferPeerServer implements PeerServer {
  private final ArrayBlockingQueue<Peer> queue;
  private final String listening;
  private volatile boolean closed;
  private volatile Runnable onClose = () -> { };

  TransferPeerServer(int capacity, String listening) {
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.listening = listening;
  }

  void onClose(Runnable r) {
    onClose = r;
  }

  /** Queues an accepted stream; false when the queue is full or this server closed. */
  boolean offer(Peer peer) {
    return !closed && queue.offer(peer);
  }

  @Override
  public Peer accept() throws IOException {
    Peer p;
    try {
      p = queue.poll(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      throw new SocketTimeoutException("interrupted while waiting for a transfer stream");
    }
    if (p == null) {
      throw new SocketTimeoutException("no transfer stream within 1 s");
    }
    return p;
  }

  @Override
  public void setReceiveBufferSize(int size) {
  }

  @Override
  public int getReceiveBufferSize() {
    return 128 * 1024;
  }

  @Override
  public String getListeningString() {
    return listening;
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    Peer p;
    while ((p = queue.poll()) != null) {
      try {
        p.close();
      } catch (IOException e) {
        // closing a stream nobody served: nothing to report
      }
    }
    onClose.run();
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "TransferPeerServer(" + listening + ")";
  }
}
