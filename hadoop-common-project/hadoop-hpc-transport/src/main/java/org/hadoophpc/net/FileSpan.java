/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.channels.FileChannel;

/**
 * {@code length} bytes of {@code file} from {@code position}: one piece of an answer sent
 * straight from files ({@link Connection#respondFiles}).
 */
public record FileSpan(FileChannel file, long position, int length) {
  public FileSpan {
    if (file == null || position < 0 || length < 0) {
      throw new IllegalArgumentException("bad file span: " + length + " bytes at " + position);
    }
  }
}
