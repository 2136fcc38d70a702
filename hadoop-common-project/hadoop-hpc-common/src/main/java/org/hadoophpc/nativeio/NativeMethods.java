/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

/**
 * The native methods of libhpcnative.so, registered by {@code JNI_OnLoad} in
 * {@code rdma-native/src/main/native/hpcn_jni.c} (names and descriptors must match the table
 * there). Callers go through {@link HpcNative}, {@link RdmaDevices} and {@link LustreApi}, which
 * check {@link HpcNative#isAvailable()} first; calling these without the library loaded throws
 * {@link UnsatisfiedLinkError}. All are slow-path and thread-safe.
 */
final class NativeMethods {
  private NativeMethods() {
  }

  /** {@code HPCN_ABI_VERSION}. */
  static native int abiVersion();

  /** The library's version string, e.g. {@code "0.1.0"}. */
  static native String version();

  /** {@code sizeof(hpcn_port_t)} followed by the offset of each field (see hpcn.h). */
  static native int[] abiLayout();

  /**
   * One tab-separated record per device port; the format is documented at hpcn_port_format
   * (hpcn.h) and parsed by {@link RdmaDevices#fromRecords(String[])}.
   */
  static native String[] probeDevices() throws NativeIoException;

  /**
   * dlopens {@code library} and resolves the llapi_layout_* symbols. Returns
   * {@code status \t missing,symbols \t dlerror text}, parsed by {@link LustreApi}.
   */
  static native String probeLustre(String library) throws NativeIoException;

  /**
   * The layout of {@code path} through the loaded liblustreapi: {@code {stripe size, stripe
   * count, OST of stripe 0, 1, ...}} (0 size or count: unknown; fewer OSTs than stripes when
   * not all are known). errno {@code ENOSYS}: no liblustreapi loaded; {@code ENOTTY} or
   * {@code ENODATA}: not on Lustre.
   */
  static native long[] lustreLayout(String path) throws NativeIoException;

  /**
   * Creates {@code path} (which must not exist) with the given stripe size and count (0 each:
   * the directory's default) through {@code llapi_layout_file_create}, and closes it.
   */
  static native void lustreCreate(String path, long stripeSize, long stripeCount, int mode)
      throws NativeIoException;

  /** mlock(2) of the first {@code len} bytes of the direct buffer {@code buffer}. */
  static native void mlock(java.nio.ByteBuffer buffer, long len) throws NativeIoException;

  /** munlock(2) of the first {@code len} bytes of the direct buffer {@code buffer}. */
  static native void munlock(java.nio.ByteBuffer buffer, long len) throws NativeIoException;

  /**
   * Bytes this process may lock: the soft RLIMIT_MEMLOCK, or {@link Long#MAX_VALUE} when it is
   * unlimited or the process holds CAP_IPC_LOCK.
   */
  static native long memlockLimit() throws NativeIoException;

  /** sysconf(_SC_PAGESIZE). */
  static native long pageSize() throws NativeIoException;

  /** posix_fadvise(2) with Linux's POSIX_FADV_* numbers (0 NORMAL .. 5 NOREUSE). */
  static native void fadvise(java.io.FileDescriptor fd, long offset, long len, int advice)
      throws NativeIoException;

  /**
   * Registers the verbs transport's natives on {@code verbsNatives}
   * ({@code org.hadoophpc.net.verbs.VerbsNatives}, in the transport's jar); throws
   * {@link NoSuchMethodError} when its methods do not match the library's table.
   */
  static native void bindVerbs(Class<?> verbsNatives) throws NativeIoException;
}
