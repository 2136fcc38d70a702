/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * The process at the other end of a same-host local socket runs as another user than this one
 * (the kernel's SO_PEERCRED says so): the connection is closed unused. Local sockets are meant
 * for one user's processes only; a peer of another user got there by a path it should not have.
 */
public class ForeignPeerException extends TransportException {
  private static final long serialVersionUID = 1L;

  public ForeignPeerException(String message) {
    super(message);
  }
}
