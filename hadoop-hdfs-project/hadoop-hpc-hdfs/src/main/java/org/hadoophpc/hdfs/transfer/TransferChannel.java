/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Collections;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;

/**
 * A transfer stream ({@link Pipe}) seen as a connected, non-blocking {@link SocketChannel}, so
 * Hadoop's own {@code SocketInputStream}/{@code SocketOutputStream} run over it with their
 * timeouts, and {@code NioInetPeer}, {@code PacketReceiver}'s direct buffers and
 * {@code DataStreamer} work unchanged. Reads and writes never block; Hadoop waits through this
 * channel's {@link TransferSelectorProvider}. Socket options are accepted and ignored.
 */
final class TransferChannel extends SocketChannel {
  private final Pipe pipe;
  private final InetSocketAddress local;
  private final InetSocketAddress remote;
  private final Socket socket;
  private final Set<TransferSelector> watchers = new CopyOnWriteArraySet<>();

  /**
   * @param local  the address reported as local
   * @param remote the address reported as the peer's (the TCP transfer address on a client)
   * @param socket what {@link #socket()} returns, or null on the DataNode's side
   */
  TransferChannel(Pipe pipe, InetSocketAddress local, InetSocketAddress remote, Socket socket) {
    super(TransferSelectorProvider.INSTANCE);
    this.pipe = pipe;
    this.local = local;
    this.remote = remote;
    this.socket = socket;
    pipe.onReadiness(this::signal);
  }

  Pipe pipe() {
    return pipe;
  }

  void watchedBy(TransferSelector s) {
    watchers.add(s);
  }

  void unwatchedBy(TransferSelector s) {
    watchers.remove(s);
  }

  private void signal() {
    for (TransferSelector s : watchers) {
      s.changed();
    }
  }

  /** Wakes the selectors waiting on this stream other than {@code me}. */
  void signalOthers(TransferSelector me) {
    for (TransferSelector s : watchers) {
      if (s != me) {
        s.changed();
      }
    }
  }

  int readyOps() {
    int ops = 0;
    if (pipe.readable()) {
      ops |= SelectionKey.OP_READ;
    }
    if (pipe.writable()) {
      ops |= SelectionKey.OP_WRITE;
    }
    return ops;
  }

  @Override
  public int read(ByteBuffer dst) throws IOException {
    ensureOpen();
    return pipe.read(dst);
  }

  @Override
  public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
    ensureOpen();
    long n = 0;
    for (int i = offset; i < offset + length; i++) {
      if (!dsts[i].hasRemaining()) {
        continue;
      }
      int r = pipe.read(dsts[i]);
      if (r < 0) {
        return n == 0 ? -1 : n;
      }
      n += r;
      if (dsts[i].hasRemaining()) {
        break;
      }
    }
    return n;
  }

  @Override
  public int write(ByteBuffer src) throws IOException {
    ensureOpen();
    int n = 0;
    while (src.hasRemaining()) {
      int w = pipe.write(src);
      if (w == 0) {
        break;
      }
      n += w;
    }
    return n;
  }

  @Override
  public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
    ensureOpen();
    long n = 0;
    for (int i = offset; i < offset + length; i++) {
      int w = write(srcs[i]);
      n += w;
      if (srcs[i].hasRemaining()) {
        break;
      }
    }
    return n;
  }

  private void ensureOpen() throws ClosedChannelException {
    if (!isOpen()) {
      throw new ClosedChannelException();
    }
  }

  @Override
  protected void implCloseSelectableChannel() {
    pipe.close();
    signal();
  }

  @Override
  protected void implConfigureBlocking(boolean block) {
    // reads and writes never block; Hadoop's streams switch to non-blocking mode anyway
  }

  @Override
  public SocketChannel bind(SocketAddress address) {
    return this;
  }

  @Override
  public <T> SocketChannel setOption(SocketOption<T> name, T value) {
    return this;
  }

  @Override
  public <T> T getOption(SocketOption<T> name) {
    return null;
  }

  @Override
  public Set<SocketOption<?>> supportedOptions() {
    return Collections.emptySet();
  }

  @Override
  public SocketChannel shutdownInput() {
    return this;
  }

  @Override
  public SocketChannel shutdownOutput() {
    return this;
  }

  @Override
  public Socket socket() {
    if (socket == null) {
      throw new UnsupportedOperationException("a DataNode-side transfer stream has no socket");
    }
    return socket;
  }

  @Override
  public boolean isConnected() {
    return true;
  }

  @Override
  public boolean isConnectionPending() {
    return false;
  }

  @Override
  public boolean connect(SocketAddress address) {
    throw new AlreadyConnectedException();
  }

  @Override
  public boolean finishConnect() {
    return true;
  }

  @Override
  public SocketAddress getRemoteAddress() {
    return remote;
  }

  @Override
  public SocketAddress getLocalAddress() {
    return local;
  }

  @Override
  public String toString() {
    return "TransferChannel[" + local + " -> " + remote + " over " + pipe.remoteAddress() + "]";
  }
}
