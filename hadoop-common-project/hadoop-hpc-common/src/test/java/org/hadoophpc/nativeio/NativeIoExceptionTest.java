/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

class NativeIoExceptionTest {

  @Test
  void messageNamesCallErrnoAndStrerror() {
    NativeIoException e = new NativeIoException("ibv_open_device(mlx5_0)", 19, "No such device");

    assertEquals("ibv_open_device(mlx5_0) failed: errno 19 (No such device)", e.getMessage());
    assertEquals(19, e.errno());
    assertEquals("ibv_open_device(mlx5_0)", e.call());
    assertEquals("No such device", e.detail());
  }

  @Test
  void errnoLessFailureKeepsTheDescription() {
    IllegalStateException cause = new IllegalStateException("x");
    NativeIoException e = new NativeIoException("find RDMA device mlx5_9", 0, "no such device",
        cause);

    assertEquals("find RDMA device mlx5_9 failed: no such device", e.getMessage());
    assertEquals(0, e.errno());
    assertSame(cause, e.getCause());
  }
}
