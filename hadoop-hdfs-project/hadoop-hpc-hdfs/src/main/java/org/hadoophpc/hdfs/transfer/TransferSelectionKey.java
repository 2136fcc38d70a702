/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectionKey;

/** The registration of one {@link TransferChannel} with one {@link TransferSelector}. */
final class TransferSelectionKey extends AbstractSelectionKey {
  private final TransferChannel channel;
  private final TransferSelector selector;
  private volatile int interestOps;
  private volatile int readyOps;

  TransferSelectionKey(TransferChannel channel, TransferSelector selector) {
    this.channel = channel;
    this.selector = selector;
  }

  @Override
  public SelectableChannel channel() {
    return channel;
  }

  TransferChannel transferChannel() {
    return channel;
  }

  @Override
  public Selector selector() {
    return selector;
  }

  @Override
  public int interestOps() {
    ensureValid();
    return interestOps;
  }

  @Override
  public java.nio.channels.SelectionKey interestOps(int ops) {
    ensureValid();
    if ((ops & ~channel.validOps()) != 0) {
      throw new IllegalArgumentException("operations " + ops + " not valid for " + channel);
    }
    interestOps = ops;
    selector.changed();
    return this;
  }

  @Override
  public int readyOps() {
    ensureValid();
    return readyOps;
  }

  void readyOps(int ops) {
    readyOps = ops;
  }

  private void ensureValid() {
    if (!isValid()) {
      throw new CancelledKeyException();
    }
  }
}
