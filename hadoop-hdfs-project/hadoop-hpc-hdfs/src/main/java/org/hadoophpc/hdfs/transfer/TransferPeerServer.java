/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.hdfs.net.Peer;
import org.apache.hadoop.hdfs.net.PeerServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The PeerServer the DataNode's stock {@code DataXceiverServer} accepts from once the plugin
 * is on: TCP connections (from the stock TCP PeerServer, accepted by a thread of its own) and
 * transport streams (offered by {@link TransferHandler} after a HELLO) in one bounded queue.
 * {@link #accept()} waits at most a second and then throws {@link SocketTimeoutException}, the
 * one exception the stock accept loop ignores (any other closes the previous peer; a runtime
 * exception stops the DataNode); an interrupt is reported the same way. Transport streams find
 * the queue full: BUSY (the client uses TCP); TCP connections wait in the kernel's backlog.
 */
final class TransferPeerServer implements PeerServer {
  private static final Logger LOG = LoggerFactory.getLogger(TransferPeerServer.class);

  private final ArrayBlockingQueue<Peer> queue;
  private final String listening;
  private volatile PeerServer tcp;
  private volatile boolean closed;
  private volatile Runnable onClose = () -> { };

  TransferPeerServer(int capacity, String listening) {
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.listening = listening;
  }

  /** Serves {@code stock}'s TCP connections too (accepted on a daemon thread); this. */
  TransferPeerServer joining(PeerServer stock, String threadName) {
    tcp = stock;
    Thread t = new Thread(this::acceptTcp, threadName);
    t.setDaemon(true);
    t.start();
    return this;
  }

  void onClose(Runnable r) {
    onClose = r;
  }

  private void acceptTcp() {
    PeerServer stock = tcp;
    while (!closed) {
      Peer p;
      try {
        p = stock.accept();
      } catch (SocketTimeoutException e) {
        continue;
      } catch (ClosedChannelException e) {
        if (!closed) {
          LOG.warn("the DataNode's TCP transfer socket {} closed: {}", stock, e.toString());
        }
        return;
      } catch (IOException | RuntimeException e) {
        if (closed) {
          return;
        }
        LOG.warn("accepting a TCP transfer connection on {}: {}", stock, e.toString());
        pause();
        continue;
      }
      try {
        while (!queue.offer(p, 1, TimeUnit.SECONDS)) {
          if (closed) {
            break;
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (closed || Thread.currentThread().isInterrupted()) {
        closeQuietly(p);
        return;
      }
    }
  }

  private static void pause() {
    try {
      Thread.sleep(100);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Queues an accepted transport stream; false when the queue is full or this server closed. */
  boolean offer(Peer peer) {
    return !closed && queue.offer(peer);
  }

  @Override
  public Peer accept() throws IOException {
    Peer p;
    try {
      p = queue.poll(1, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      throw new SocketTimeoutException("interrupted while waiting for a transfer connection");
    }
    if (p == null) {
      throw new SocketTimeoutException("no transfer connection within 1 s");
    }
    return p;
  }

  @Override
  public void setReceiveBufferSize(int size) throws IOException {
    if (tcp != null) {
      tcp.setReceiveBufferSize(size);
    }
  }

  @Override
  public int getReceiveBufferSize() throws IOException {
    return tcp != null ? tcp.getReceiveBufferSize() : 128 * 1024;
  }

  @Override
  public String getListeningString() {
    return tcp != null ? tcp.getListeningString() + " and " + listening : listening;
  }

  @Override
  public void close() throws IOException {
    if (closed) {
      return;
    }
    closed = true;
    try {
      if (tcp != null) {
        tcp.close();
      }
    } finally {
      Peer p;
      while ((p = queue.poll()) != null) {
        closeQuietly(p);
      }
      onClose.run();
    }
  }

  private static void closeQuietly(Peer p) {
    try {
      p.close();
    } catch (IOException e) {
      // a connection nobody served: nothing to report
    }
  }

  boolean isClosed() {
    return closed;
  }

  @Override
  public String toString() {
    return "TransferPeerServer(" + getListeningString() + ")";
  }
}
