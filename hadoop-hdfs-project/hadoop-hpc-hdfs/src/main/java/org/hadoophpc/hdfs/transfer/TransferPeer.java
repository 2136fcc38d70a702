/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.ReadableByteChannel;

import org.apache.hadoop.hdfs.net.Peer;
import org.apache.hadoop.net.SocketInputStream;
import org.apache.hadoop.net.unix.DomainSocket;

/**
 * A client's transfer stream as the DataNode's stock {@code DataXceiver} sees it. Input is
 * Hadoop's {@link SocketInputStream} (its read timeouts), output a {@link TransferOutputStream}.
 * Never a secure channel: SASL and encryption decide exactly as on TCP.
 */
final class TransferPeer implements Peer {
  private final TransferChannel channel;
  private final SocketInputStream in;
  private final TransferOutputStream out;
  private final InetSocketAddress remote;
  private final InetSocketAddress local;

  TransferPeer(ServerPipe pipe, InetSocketAddress local) throws IOException {
    this.remote = pipe.remoteAddress();
    this.local = local;
    this.channel = new TransferChannel(pipe, local, remote, null);
    this.in = new SocketInputStream(channel, 0);
    this.out = new TransferOutputStream(channel, pipe);
  }

  @Override
  public ReadableByteChannel getInputStreamChannel() {
    return in;
  }

  @Override
  public void setReadTimeout(int timeoutMs) {
    in.setTimeout(timeoutMs);
  }

  @Override
  public int getReceiveBufferSize() {
    return 128 * 1024;
  }

  @Override
  public boolean getTcpNoDelay() {
    return true;
  }

  @Override
  public void setWriteTimeout(int timeoutMs) {
    out.setTimeout(timeoutMs);
  }

  @Override
  public boolean isClosed() {
    return !channel.isOpen();
  }

  @Override
  public void close() throws IOException {
    try {
      in.close();
    } finally {
      out.close();
    }
  }

  @Override
  public String getRemoteAddressString() {
    return remote.getAddress() == null ? remote.toString()
        : "/" + remote.getAddress().getHostAddress() + ":" + remote.getPort();
  }

  @Override
  public String getLocalAddressString() {
    return local.toString();
  }

  @Override
  public InputStream getInputStream() {
    return in;
  }

  @Override
  public OutputStream getOutputStream() {
    return out;
  }

  @Override
  public boolean isLocal() {
    // a loopback peer is on this host too (a same-host local socket shows as one)
    return remote.getAddress() != null && (remote.getAddress().isLoopbackAddress()
        || remote.getAddress().equals(local.getAddress()));
  }

  @Override
  public DomainSocket getDomainSocket() {
    return null;
  }

  @Override
  public boolean hasSecureChannel() {
    return false;
  }

  @Override
  public String toString() {
    return "TransferPeer(" + getRemoteAddressString() + " -> " + local + ")";
  }
}
