/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.net.InetSocketAddress;

/** A listening endpoint; closing it stops accepting but leaves accepted connections open. */
public interface Listener extends AutoCloseable {

  /** The bound address (with the actual port when 0 was asked for). */
  InetSocketAddress address();

  @Override
  void close();
}
