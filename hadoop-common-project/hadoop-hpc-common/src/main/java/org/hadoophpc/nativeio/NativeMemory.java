/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;

/**
 * Memory locking and page-cache advice through libhpcnative: what a DataNode needs from native
 * code to keep RAM_DISK replicas and cached blocks in locked memory, without Hadoop's
 * libhadoop.so. Every call throws {@link NativeIoException} (with the cause of
 * {@link HpcNative#unavailabilityCause()} when the library is not loaded); thread-safe.
 */
public final class NativeMemory {
  /** Linux's POSIX_FADV_* numbers, as Hadoop's {@code NativeIO.POSIX} uses them. */
  public static final int FADV_NORMAL = 0;
  public static final int FADV_RANDOM = 1;
  public static final int FADV_SEQUENTIAL = 2;
  public static final int FADV_WILLNEED = 3;
  public static final int FADV_DONTNEED = 4;
  public static final int FADV_NOREUSE = 5;

  private NativeMemory() {
  }

  /** Locks the first {@code len} bytes of a direct (or mapped) buffer into RAM. */
  public static void mlock(ByteBuffer buffer, long len) throws NativeIoException {
    HpcNative.ensureAvailable();
    NativeMethods.mlock(buffer, len);
  }

  /** Unlocks what {@link #mlock} locked. */
  public static void munlock(ByteBuffer buffer, long len) throws NativeIoException {
    HpcNative.ensureAvailable();
    NativeMethods.munlock(buffer, len);
  }

  /**
   * Bytes this process may lock: the soft RLIMIT_MEMLOCK ({@code ulimit -l}), or
   * {@link Long#MAX_VALUE} when it is unlimited or the process holds CAP_IPC_LOCK.
   */
  public static long memlockLimit() throws NativeIoException {
    HpcNative.ensureAvailable();
    return NativeMethods.memlockLimit();
  }

  /** The operating system's page size in bytes. */
  public static long pageSize() throws NativeIoException {
    HpcNative.ensureAvailable();
    return NativeMethods.pageSize();
  }

  /** posix_fadvise(2) on an open file: {@code len} 0 means to the end of the file. */
  public static void fadvise(FileDescriptor fd, long offset, long len, int advice)
      throws NativeIoException {
    HpcNative.ensureAvailable();
    NativeMethods.fadvise(fd, offset, len, advice);
  }
}
