/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketImpl;
import java.nio.channels.SocketChannel;

import org.apache.hadoop.net.SocketInputStream;
import org.apache.hadoop.net.SocketOutputStream;

/**
 * A socket to a DataNode's transfer port that {@link #connect}s over the transport when the
 * DataNode serves it there, else over TCP (a real NIO socket this one then delegates to).
 * Until connected {@link #getChannel()} is null, so Hadoop's {@code NetUtils.connect} calls
 * {@link #connect(SocketAddress, int)}; afterwards it is the stream's {@link TransferChannel}
 * (or the TCP socket's channel) and Hadoop's stock streams and peers run over it. Addresses
 * report the DataNode's TCP transfer address, which SASL trust and logs use.
 */
final class TransferSocket extends Socket {
  private static final InetSocketAddress NO_LOCAL = new InetSocketAddress(0);

  private final TransferClient client;
  private Socket tcp;
  private TransferChannel channel;
  private InetSocketAddress remote;
  private SocketAddress bindTo;
  private boolean closed;
  private int soTimeout;
  private int sendBuffer;

  TransferSocket(TransferClient client) throws SocketException {
    super((SocketImpl) null);
    this.client = client;
  }

  @Override
  public synchronized void connect(SocketAddress endpoint, int timeout) throws IOException {
    if (closed) {
      throw new SocketException("Socket is closed");
    }
    if (isConnected()) {
      throw new SocketException("already connected");
    }
    if (!(endpoint instanceof InetSocketAddress)) {
      throw new IllegalArgumentException("unsupported address " + endpoint);
    }
    InetSocketAddress to = (InetSocketAddress) endpoint;
    long start = System.nanoTime();
    TransferMetrics.Fallback why = client.precheck(to, bindTo != null);
    IOException error = null;
    if (why == null) {
      try {
        ClientPipe pipe = client.open(to, timeout);
        remote = to;
        channel = new TransferChannel(pipe, NO_LOCAL, to, this);
        client.metrics.opened(client.role);
        return;
      } catch (TransferRefusedException e) {
        why = e.error() == TransferError.BUSY ? TransferMetrics.Fallback.BUSY
            : TransferMetrics.Fallback.HELLO_REJECTED;
        client.remember(to, e.error() == TransferError.BUSY);
        error = e;
      } catch (IOException e) {
        why = TransferMetrics.Fallback.CONNECT_FAILED;
        client.remember(to, false);
        error = e;
      }
    }
    if (client.conf.streamFailsWithoutTransport && why != TransferMetrics.Fallback.DISABLED) {
      ConnectException e = new ConnectException("HDFS transfer stream to " + to
          + " cannot use the transport (" + why + (error != null ? ": " + error.getMessage()
          : why == TransferMetrics.Fallback.NO_TRANSPORT ? ": " + client.noTransportReason()
          : why == TransferMetrics.Fallback.PRIVILEGED_PORT ? ": " + PrivilegedPortCheck
              .clientProblem(client.conf.trustsPrivilegedPorts, to.getPort())
          : "") + ") and " + TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY
          + "=true forbids TCP");
      if (error != null) {
        e.initCause(error);
      }
      throw e;
    }
    client.metrics.fellBack(client.role, why);
    Socket s = SocketChannel.open().socket();
    try {
      if (bindTo != null) {
        s.bind(bindTo);
      }
      if (sendBuffer > 0) {
        s.setSendBufferSize(sendBuffer);
      }
      int left = timeout;
      if (timeout > 0) {
        left = (int) Math.max(1, timeout - (System.nanoTime() - start) / 1_000_000);
      }
      s.connect(to, left);
      s.setSoTimeout(soTimeout);
    } catch (IOException e) {
      s.close();
      throw e;
    }
    tcp = s;
    remote = to;
  }

  @Override
  public void connect(SocketAddress endpoint) throws IOException {
    connect(endpoint, 0);
  }

  @Override
  public synchronized void bind(SocketAddress local) throws IOException {
    bindTo = local;
  }

  /** True when this socket's stream runs over the transport. */
  synchronized boolean overTransport() {
    return channel != null;
  }

  @Override
  public synchronized SocketChannel getChannel() {
    return channel != null ? channel : tcp != null ? tcp.getChannel() : null;
  }

  @Override
  public InputStream getInputStream() throws IOException {
    if (tcp != null) {
      return tcp.getInputStream();
    }
    return new SocketInputStream(connected(), soTimeout);
  }

  @Override
  public OutputStream getOutputStream() throws IOException {
    if (tcp != null) {
      return tcp.getOutputStream();
    }
    return new SocketOutputStream(connected(), 0);
  }

  private TransferChannel connected() throws SocketException {
    if (channel == null) {
      throw new SocketException("Socket is not connected");
    }
    return channel;
  }

  @Override
  public InetAddress getInetAddress() {
    return tcp != null ? tcp.getInetAddress() : remote == null ? null : remote.getAddress();
  }

  @Override
  public int getPort() {
    return tcp != null ? tcp.getPort() : remote == null ? 0 : remote.getPort();
  }

  @Override
  public SocketAddress getRemoteSocketAddress() {
    return tcp != null ? tcp.getRemoteSocketAddress() : remote;
  }

  @Override
  public InetAddress getLocalAddress() {
    return tcp != null ? tcp.getLocalAddress() : NO_LOCAL.getAddress();
  }

  @Override
  public int getLocalPort() {
    return tcp != null ? tcp.getLocalPort() : -1;
  }

  @Override
  public SocketAddress getLocalSocketAddress() {
    return tcp != null ? tcp.getLocalSocketAddress() : NO_LOCAL;
  }

  @Override
  public synchronized void setTcpNoDelay(boolean on) throws SocketException {
    if (tcp != null) {
      tcp.setTcpNoDelay(on);
    }
  }

  @Override
  public synchronized boolean getTcpNoDelay() throws SocketException {
    return tcp == null || tcp.getTcpNoDelay();
  }

  @Override
  public synchronized void setSoTimeout(int timeout) throws SocketException {
    soTimeout = timeout;
    if (tcp != null) {
      tcp.setSoTimeout(timeout);
    }
  }

  @Override
  public synchronized int getSoTimeout() throws SocketException {
    return tcp != null ? tcp.getSoTimeout() : soTimeout;
  }

  @Override
  public synchronized void setKeepAlive(boolean on) throws SocketException {
    if (tcp != null) {
      tcp.setKeepAlive(on);
    }
  }

  @Override
  public synchronized boolean getKeepAlive() throws SocketException {
    return tcp != null && tcp.getKeepAlive();
  }

  @Override
  public synchronized void setSendBufferSize(int size) throws SocketException {
    sendBuffer = size;
    if (tcp != null) {
      tcp.setSendBufferSize(size);
    }
  }

  @Override
  public synchronized int getSendBufferSize() throws SocketException {
    return tcp != null ? tcp.getSendBufferSize() : client.conf.chunk;
  }

  @Override
  public synchronized void setReceiveBufferSize(int size) throws SocketException {
    if (tcp != null) {
      tcp.setReceiveBufferSize(size);
    }
  }

  @Override
  public synchronized int getReceiveBufferSize() throws SocketException {
    return tcp != null ? tcp.getReceiveBufferSize() : client.conf.chunk;
  }

  @Override
  public void setSoLinger(boolean on, int linger) throws SocketException {
    if (tcp != null) {
      tcp.setSoLinger(on, linger);
    }
  }

  @Override
  public void setTrafficClass(int tc) throws SocketException {
    if (tcp != null) {
      tcp.setTrafficClass(tc);
    }
  }

  @Override
  public void shutdownInput() throws IOException {
    if (tcp != null) {
      tcp.shutdownInput();
    }
  }

  @Override
  public void shutdownOutput() throws IOException {
    if (tcp != null) {
      tcp.shutdownOutput();
    }
  }

  @Override
  public synchronized void close() throws IOException {
    closed = true;
    if (tcp != null) {
      tcp.close();
    }
    if (channel != null) {
      channel.close();
    }
  }

  @Override
  public synchronized boolean isConnected() {
    return tcp != null ? tcp.isConnected() : channel != null;
  }

  @Override
  public synchronized boolean isBound() {
    return tcp != null ? tcp.isBound() : channel != null || bindTo != null;
  }

  @Override
  public synchronized boolean isClosed() {
    if (tcp != null) {
      return tcp.isClosed();
    }
    return closed || (channel != null && !channel.isOpen());
  }

  @Override
  public synchronized boolean isInputShutdown() {
    return tcp != null && tcp.isInputShutdown();
  }

  @Override
  public synchronized boolean isOutputShutdown() {
    return tcp != null && tcp.isOutputShutdown();
  }

  @Override
  public String toString() {
    return tcp != null ? tcp.toString()
        : "TransferSocket[" + (remote == null ? "unconnected" : remote + " over "
            + client.endpoint(remote)) + "]";
  }
}
