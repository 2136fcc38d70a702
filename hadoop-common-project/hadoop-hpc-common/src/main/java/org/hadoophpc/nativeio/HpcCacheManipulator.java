/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.FileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;

import org.apache.hadoop.io.nativeio.Errno;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.apache.hadoop.io.nativeio.NativeIOException;
import org.apache.hadoop.util.NativeCodeLoader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hadoop's cache manipulator ({@code NativeIO.POSIX.CacheManipulator}: mlock, the locked-memory
 * limit, page size, fadvise) on libhpcnative instead of libhadoop.so, which is not on Maven
 * Central. With it installed a DataNode accepts {@code dfs.datanode.max.locked.memory > 0}, so
 * RAM_DISK replicas (lazy persist) and HDFS centralized caching work, and locking is real.
 *
 * <p>{@link #install()} puts it in place before the DataNode starts, also where libhadoop is
 * loaded: stock's manipulator reads the limit as {@code ulimit -l} alone, so a DataNode with
 * {@code CAP_IPC_LOCK} (root), which the kernel lets lock past that limit, would be refused
 * locked memory it can have; libhpcnative counts the capability.
 */
public class HpcCacheManipulator extends NativeIO.POSIX.CacheManipulator {
  private static final Logger LOG = LoggerFactory.getLogger(HpcCacheManipulator.class);
  private static final int ENOMEM = 12;

  /** What {@link #install()} did, for the DataNode's start-up line. */
  public enum Installed {
    /** Ours is in place. */
    HPCNATIVE,
    /** libhpcnative is not loaded but libhadoop is: stock's manipulator locks memory. */
    LIBHADOOP,
    /** Neither: Hadoop's manipulator stays, and locked memory (> 0) is refused at start-up. */
    NONE
  }

  /**
   * Installs the manipulator process-wide where libhpcnative is loaded, and gives Hadoop's
   * {@code POSIX_FADV_*} constants (set by libhadoop's JNI, -1 without it) Linux's numbers so
   * the DataNode's readahead and drop-behind advice reaches the kernel. Idempotent.
   */
  public static synchronized Installed install() {
    if (!HpcNative.isAvailable()) {
      return NativeCodeLoader.isNativeCodeLoaded() && NativeIO.isAvailable()
          ? Installed.LIBHADOOP : Installed.NONE;
    }
    if (!(NativeIO.POSIX.getCacheManipulator() instanceof HpcCacheManipulator)) {
      NativeIO.POSIX.setCacheManipulator(new HpcCacheManipulator());
    }
    if (NativeIO.POSIX.POSIX_FADV_NORMAL < 0) {
      NativeIO.POSIX.POSIX_FADV_NORMAL = NativeMemory.FADV_NORMAL;
      NativeIO.POSIX.POSIX_FADV_RANDOM = NativeMemory.FADV_RANDOM;
      NativeIO.POSIX.POSIX_FADV_SEQUENTIAL = NativeMemory.FADV_SEQUENTIAL;
      NativeIO.POSIX.POSIX_FADV_WILLNEED = NativeMemory.FADV_WILLNEED;
      NativeIO.POSIX.POSIX_FADV_DONTNEED = NativeMemory.FADV_DONTNEED;
      NativeIO.POSIX.POSIX_FADV_NOREUSE = NativeMemory.FADV_NOREUSE;
    }
    return Installed.HPCNATIVE;
  }

  @Override
  public void mlock(String identifier, ByteBuffer buffer, long len) throws IOException {
    try {
      NativeMemory.mlock(buffer, len);
    } catch (NativeIoException e) {
      throw new IOException("cannot lock " + len + " bytes of " + identifier + " in memory: "
          + e.getMessage() + (e.errno() == ENOMEM ? " (over the locked-memory"
          + " limit, ulimit -l " + limitText() + ")" : ""), e);
    }
  }

  @Override
  public long getMemlockLimit() {
    try {
      return NativeMemory.memlockLimit();
    } catch (NativeIoException e) {
      LOG.warn("cannot read the locked-memory limit: {}", e.getMessage());
      return 0;
    }
  }

  @Override
  public long getOperatingSystemPageSize() {
    try {
      return NativeMemory.pageSize();
    } catch (NativeIoException e) {
      LOG.warn("cannot read the page size, assuming 4096: {}", e.getMessage());
      return 4096;
    }
  }

  @Override
  public void posixFadviseIfPossible(String identifier, FileDescriptor fd, long offset,
      long len, int flags) throws NativeIOException {
    try {
      NativeMemory.fadvise(fd, offset, len, flags);
    } catch (NativeIoException e) {
      throw new NativeIOException("posix_fadvise(" + flags + ") on " + identifier + ": "
          + e.getMessage(), Errno.UNKNOWN);
    }
  }

  @Override
  public boolean verifyCanMlock() {
    return HpcNative.isAvailable();
  }

  private String limitText() {
    long limit = getMemlockLimit();
    return limit == Long.MAX_VALUE ? "unlimited" : limit / 1024 + " KiB";
  }
}
