/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.net.InetSocketAddress;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteRegion;

/**
 * A connection with no transport under it, for tests that drive the transfer stream's classes
 * by hand: requests are taken and released, answers released, remote memory unsupported.
 * Subclasses keep what their test looks at.
 */
abstract class FakeConnection implements Connection {
  volatile boolean open = true;

  @Override
  public InetSocketAddress remoteAddress() {
    return new InetSocketAddress("127.0.0.1", 9866);
  }

  @Override
  public boolean isOpen() {
    return open;
  }

  @Override
  public int inFlight() {
    return 0;
  }

  @Override
  public boolean request(Buffer request, Completion<Buffer> completion) {
    request.release();
    return true;
  }

  @Override
  public boolean read(RemoteRegion region, long offset, int length, Buffer destination,
      Completion<Void> completion) {
    return false;
  }

  @Override
  public boolean write(Buffer source, RemoteRegion region, long offset,
      Completion<Void> completion) {
    return false;
  }

  @Override
  public void respond(long requestId, Buffer response) {
    response.release();
  }

  @Override
  public void fail(long requestId, int code, String message) {
  }

  @Override
  public void close() {
    open = false;
  }
}
