/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.File;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Loads {@code libhpcnative.so} once per class loader and says whether native code can be used.
 *
 * <p>Loading never throws: a missing library, a missing libibverbs, or an ABI mismatch is
 * recorded and exposed through {@link #isAvailable()} and {@link #unavailabilityCause()}, whose
 * message says what to install or set. Callers that need native code call {@link
 * #ensureAvailable()}; callers that can fall back (the transport factory, Lustre layout) ask
 * {@link #isAvailable()} and log the cause once themselves.
 *
 * <p>Search order: the system property {@value #LIBRARY_PROPERTY} (an absolute path; used by
 * tests and scripts, never falls back), else {@code System.loadLibrary("hpcnative")} on
 * {@code java.library.path} (the tarball's {@code lib/native}).
 *
 * <p>After loading, the library's {@code HPCN_ABI_VERSION} and the layout of the records it
 * shares with Java are compared with {@link #ABI_VERSION} and {@link #EXPECTED_LAYOUT}; a
 * library from another release is refused rather than misread.
 *
 * <p>Thread-safe: the state is computed in the static initializer and immutable afterwards.
 */
public final class HpcNative {
  /** System property naming the absolute path of libhpcnative.so. */
  public static final String LIBRARY_PROPERTY = "hadoop.hpc.native.lib";

  /** The name passed to {@link System#loadLibrary(String)}. */
  public static final String LIBRARY_NAME = "hpcnative";

  /** The {@code HPCN_ABI_VERSION} this jar was written against. */
  public static final int ABI_VERSION = 5;

  /**
   * {@code sizeof(hpcn_port_t)} then {@code offsetof} of node_guid, port_num, phys_port_cnt,
   * state, link_layer, active_mtu, lid, gid_count, err_no, failed_call, device_name, fw_ver;
   * {@code sizeof(hpcn_wc_t)} then wr_id, status, opcode, byte_len, qp_num, imm, flags,
   * vendor_status; {@code sizeof(hpcn_cm_event_t)} then id, listen_id, type, status,
   * private_data_len, responder_resources, initiator_depth, private_data (hpcn.h, x86_64/aarch64
   * LP64). rdma-native's test_version.c and {@code net.verbs.VerbsNatives} hold the same numbers.
   */
  static final int[] EXPECTED_LAYOUT = {
      176, 0, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 112,
      40, 0, 8, 12, 16, 20, 24, 28, 32,
      96, 0, 8, 16, 20, 24, 28, 30, 32};

  private static final Logger LOG = LoggerFactory.getLogger(HpcNative.class);

  private static final LoadResult LOADED = load(System.getProperty(LIBRARY_PROPERTY));

  private HpcNative() {
  }

  /** True when libhpcnative.so is loaded and speaks this jar's ABI. */
  public static boolean isAvailable() {
    return LOADED.available;
  }

  /**
   * Why native code is unavailable, with an actionable message; {@code null} when it is
   * available.
   */
  public static Throwable unavailabilityCause() {
    return LOADED.cause;
  }

  /** Where libhpcnative.so was loaded (or was looked for) from, when known. */
  public static Optional<String> libraryPath() {
    return Optional.ofNullable(LOADED.path);
  }

  /** The loaded library's version string, e.g. {@code "0.1.0"}; empty when unavailable. */
  public static Optional<String> version() {
    return Optional.ofNullable(LOADED.version);
  }

  /** Throws, carrying {@link #unavailabilityCause()}, unless native code is available. */
  public static void ensureAvailable() throws NativeIoException {
    LOADED.ensureAvailable();
  }

  /**
   * Registers the verbs transport's natives on {@code verbsNatives} (the transport's
   * {@code VerbsNatives}, handed over because it may sit in another jar and class loader than
   * this one). Call once per class, after {@link #ensureAvailable()}.
   *
   * @throws NativeIoException when the library is unavailable or its verbs table does not match
   *                           the class (a library and jars built from different sources)
   */
  public static void bindVerbsNatives(Class<?> verbsNatives) throws NativeIoException {
    ensureAvailable();
    try {
      NativeMethods.bindVerbs(verbsNatives);
    } catch (LinkageError e) {
      throw new NativeIoException("bindVerbs", 0, "libhpcnative's verbs natives do not match "
          + verbsNatives.getName() + " (" + e + "): rebuild rdma-native and the hadoop-hpc jars"
          + " from the same source", e);
    }
  }

  /**
   * Loads the library without touching the process-wide state. Package-private so tests can
   * try bogus paths in the running JVM (System.load of a path that fails leaves nothing behind).
   *
   * @param explicitPath the value of {@value #LIBRARY_PROPERTY}, or null/empty to use
   *                     java.library.path
   */
  static LoadResult load(String explicitPath) {
    boolean explicit = explicitPath != null && !explicitPath.isEmpty();
    String path = explicit ? explicitPath : findOnLibraryPath();
    try {
      if (explicit) {
        File file = new File(explicitPath);
        if (!file.isAbsolute()) {
          return LoadResult.unavailable(path, new UnsatisfiedLinkError(LIBRARY_PROPERTY + "="
              + explicitPath + " is not an absolute path: give the full path to "
              + System.mapLibraryName(LIBRARY_NAME)));
        }
        if (!file.isFile()) {
          return LoadResult.unavailable(path, new UnsatisfiedLinkError(LIBRARY_PROPERTY + "="
              + explicitPath + " does not exist: build it (mvn -pl rdma-native verify) or unset "
              + LIBRARY_PROPERTY + " to search java.library.path"));
        }
        System.load(file.getAbsolutePath());
      } else {
        System.loadLibrary(LIBRARY_NAME);
      }
    } catch (UnsatisfiedLinkError e) {
      return LoadResult.unavailable(path,
          explain(e, explicit ? explicitPath : null, System.getProperty("java.library.path")));
    } catch (LinkageError | RuntimeException e) {
      // NoClassDefFoundError from JNI_OnLoad's FindClass, SecurityException, ...
      return LoadResult.unavailable(path, linkError("could not load "
          + describe(path) + ": " + e, e));
    }

    String version;
    Throwable mismatch;
    try {
      version = NativeMethods.version();
      mismatch = checkAbi(NativeMethods.abiVersion(), NativeMethods.abiLayout(), version, path);
    } catch (Exception | LinkageError e) {
      return LoadResult.unavailable(path, linkError(describe(path)
          + " loaded but failed the ABI handshake: " + e
          + ": install the libhpcnative.so of the same hadoop-hpc release", e));
    }
    if (mismatch != null) {
      return LoadResult.unavailable(path, mismatch);
    }
    LOG.debug("loaded libhpcnative {} (abi {}) from {}", version, ABI_VERSION, describe(path));
    return LoadResult.available(path, version);
  }

  /** Null when the native side matches this jar, else the reason naming both sides. */
  static Throwable checkAbi(int nativeAbi, int[] nativeLayout, String nativeVersion,
      String path) {
    if (nativeAbi != ABI_VERSION) {
      return new UnsatisfiedLinkError(describe(path) + " is libhpcnative " + nativeVersion
          + " with abi " + nativeAbi + ", but this hadoop-hpc-common expects abi " + ABI_VERSION
          + ": install the libhpcnative.so of the same hadoop-hpc release");
    }
    if (!Arrays.equals(nativeLayout, EXPECTED_LAYOUT)) {
      return new UnsatisfiedLinkError(describe(path) + " (libhpcnative " + nativeVersion
          + ", abi " + nativeAbi + ") lays out its shared records (hpcn_port_t, hpcn_wc_t,"
          + " hpcn_cm_event_t) as " + Arrays.toString(nativeLayout)
          + " but this hadoop-hpc-common (abi " + ABI_VERSION + ") expects "
          + Arrays.toString(EXPECTED_LAYOUT)
          + ": rebuild rdma-native and hadoop-hpc-common from the same source");
    }
    return null;
  }

  /** Turns the JVM's load error into one that says what to install or set. */
  static UnsatisfiedLinkError explain(UnsatisfiedLinkError e, String explicitPath,
      String javaLibraryPath) {
    String message = String.valueOf(e.getMessage());
    String what = explicitPath != null ? explicitPath : System.mapLibraryName(LIBRARY_NAME);
    if (message.contains("libibverbs.so") || message.contains("librdmacm.so")) {
      return linkError("could not load " + what + ": " + message
          + ": install rdma-core's libibverbs1 and librdmacm1"
          + " (apt-get install libibverbs1 librdmacm1, or dnf install libibverbs librdmacm)", e);
    }
    if (explicitPath == null) {
      return linkError(System.mapLibraryName(LIBRARY_NAME) + " not found on java.library.path=["
          + javaLibraryPath + "]: install the hadoop-hpc tarball's lib/native or set -D"
          + LIBRARY_PROPERTY + "=/path/to/" + System.mapLibraryName(LIBRARY_NAME), e);
    }
    return linkError("could not load " + what + ": " + message
        + ": rebuild it for this platform (mvn -pl rdma-native verify) or unset "
        + LIBRARY_PROPERTY, e);
  }

  private static UnsatisfiedLinkError linkError(String message, Throwable cause) {
    UnsatisfiedLinkError error = new UnsatisfiedLinkError(message);
    error.initCause(cause);
    return error;
  }

  private static String describe(String path) {
    return path != null ? path : System.mapLibraryName(LIBRARY_NAME) + " (java.library.path)";
  }

  /** Best effort: the file System.loadLibrary would pick, searching the JVM's own dirs first. */
  private static String findOnLibraryPath() {
    String fileName = System.mapLibraryName(LIBRARY_NAME);
    List<String> dirs = new ArrayList<>();
    for (String property : new String[] {"sun.boot.library.path", "java.library.path"}) {
      String value = System.getProperty(property);
      if (value != null) {
        dirs.addAll(Arrays.asList(value.split(File.pathSeparator)));
      }
    }
    for (String dir : dirs) {
      if (!dir.isEmpty()) {
        File candidate = new File(dir, fileName);
        if (candidate.isFile()) {
          return candidate.getAbsolutePath();
        }
      }
    }
    return null;
  }

  /** The outcome of one load attempt. Immutable. */
  static final class LoadResult {
    final boolean available;
    final Throwable cause;
    final String path;
    final String version;

    private LoadResult(boolean available, Throwable cause, String path, String version) {
      this.available = available;
      this.cause = cause;
      this.path = path;
      this.version = version;
    }

    static LoadResult available(String path, String version) {
      return new LoadResult(true, null, path, version);
    }

    static LoadResult unavailable(String path, Throwable cause) {
      LOG.debug("libhpcnative unavailable: {}", cause.getMessage());
      return new LoadResult(false, cause, path, null);
    }

    void ensureAvailable() throws NativeIoException {
      if (!available) {
        throw new NativeIoException("load " + System.mapLibraryName(LIBRARY_NAME), 0,
            cause.getMessage(), cause);
      }
    }
  }
}
