/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.net.ProtocolFamily;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;

/**
 * The provider of {@link TransferChannel}s: Hadoop's {@code SocketIOWithTimeout} opens its
 * selectors through the channel's provider, so waits on a transfer stream use a
 * {@link TransferSelector}. It opens nothing else.
 */
final class TransferSelectorProvider extends SelectorProvider {
  static final TransferSelectorProvider INSTANCE = new TransferSelectorProvider();

  private TransferSelectorProvider() {
  }

  @Override
  public AbstractSelector openSelector() {
    return new TransferSelector(this);
  }

  @Override
  public DatagramChannel openDatagramChannel() {
    throw new UnsupportedOperationException("transfer streams only");
  }

  @Override
  public DatagramChannel openDatagramChannel(ProtocolFamily family) {
    throw new UnsupportedOperationException("transfer streams only");
  }

  @Override
  public Pipe openPipe() {
    throw new UnsupportedOperationException("transfer streams only");
  }

  @Override
  public ServerSocketChannel openServerSocketChannel() {
    throw new UnsupportedOperationException("transfer streams only");
  }

  @Override
  public SocketChannel openSocketChannel() {
    throw new UnsupportedOperationException("transfer streams only");
  }
}
