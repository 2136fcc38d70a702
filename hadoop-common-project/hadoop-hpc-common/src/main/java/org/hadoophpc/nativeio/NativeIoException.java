/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.IOException;

/**
 * A native call failed: carries the call's name, the {@code errno} it left and that errno's
 * {@code strerror} text. The one exception slow-path natives throw; {@code hpcn_jni.c}
 * constructs it through the {@code (String, int, String)} constructor, so keep that signature.
 * Immutable.
 */
public class NativeIoException extends IOException {
  private static final long serialVersionUID = 1L;

  private final String call;
  private final int errno;
  private final String detail;

  /**
   * @param call    what failed, e.g. {@code "ibv_open_device(mlx5_0)"}
   * @param errno   the positive errno, or 0 when the failure has no errno
   * @param detail  {@code strerror(errno)}, or a description when errno is 0
   */
  public NativeIoException(String call, int errno, String detail) {
    this(call, errno, detail, null);
  }

  public NativeIoException(String call, int errno, String detail, Throwable cause) {
    super(format(call, errno, detail), cause);
    this.call = call;
    this.errno = errno;
    this.detail = detail;
  }

  private static String format(String call, int errno, String detail) {
    return errno != 0
        ? call + " failed: errno " + errno + " (" + detail + ")"
        : call + " failed: " + detail;
  }

  /** The failed call, e.g. {@code "ibv_get_device_list"}. */
  public String call() {
    return call;
  }

  /** The positive errno, or 0 when the failure did not come with one. */
  public int errno() {
    return errno;
  }

  /** {@code strerror(errno)}, or the description given for an errno-less failure. */
  public String detail() {
    return detail;
  }
}
