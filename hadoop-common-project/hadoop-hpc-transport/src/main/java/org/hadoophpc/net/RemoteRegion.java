/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.ByteBuffer;

/**
 * A peer's memory open to one-sided reads and writes, as published by
 * {@link Transport#expose}: small enough to travel inside a message ({@link #BYTES} bytes).
 *
 * @param address transport-specific base (verbs: virtual address; tcp: 0)
 * @param length  bytes accessible from {@code address}
 * @param key     transport-specific key (verbs: rkey; tcp: region id)
 */
public record RemoteRegion(long address, long length, long key) {

  public static final int BYTES = 24;

  public RemoteRegion {
    if (length < 0) {
      throw new IllegalArgumentException("negative region length " + length);
    }
  }

  /** Writes the descriptor at {@code out}'s position. */
  public void writeTo(ByteBuffer out) {
    out.putLong(address).putLong(length).putLong(key);
  }

  /** Reads a descriptor written by {@link #writeTo}. */
  public static RemoteRegion readFrom(ByteBuffer in) {
    return new RemoteRegion(in.getLong(), in.getLong(), in.getLong());
  }

  /** Throws unless {@code [offset, offset + len)} lies inside the region. */
  public void checkBounds(long offset, long len) {
    if (offset < 0 || len < 0 || offset > length - len) {
      throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + len)
          + ") is outside region of " + length + " bytes");
    }
  }
}
