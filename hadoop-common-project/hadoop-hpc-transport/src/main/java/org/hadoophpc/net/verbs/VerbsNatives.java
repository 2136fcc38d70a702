/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.nio.ByteBuffer;

import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.NativeIoException;

/**
 * The verbs natives of libhpcnative.so, registered by {@link #bind()} from
 * {@code rdma-native/src/main/native/hpcn_jni_verbs.c} (names and descriptors must match the
 * table there; the C core is documented in {@code hpcn.h}). Only {@link VerbsTransport} and its
 * helpers call these, after {@code HpcNative.ensureAvailable()}.
 *
 * <p>Slow-path methods (declared {@code throws NativeIoException}) throw on failure. Data-path
 * methods return {@code >= 0} or {@code -errno} and never throw. Handles are pointers; 0 is never
 * valid. Thread-safety: {@link #wake}, {@link #regMr}, {@link #deregMr}, {@link #mwAlloc} and
 * {@link #mwDealloc} may be called from any thread; everything else on a context belongs to
 * its event loop.
 *
 * <p>Record layouts below are checked at load time by {@code HpcNative}'s ABI handshake
 * ({@code hpcn_abi_layout}), so these constants cannot silently disagree with C.
 */
final class VerbsNatives {
  private static boolean bound;

  private VerbsNatives() {
  }

  /**
   * Has libhpcnative register the natives below on this class (the library is loaded by
   * hadoop-hpc-common and cannot name a class of this jar); idempotent.
   */
  static synchronized void bind() throws NativeIoException {
    if (!bound) {
      HpcNative.bindVerbsNatives(VerbsNatives.class);
      bound = true;
    }
  }

  /** {@code sizeof(hpcn_wc_t)} and field offsets. */
  static final int WC_SIZE = 40;
  static final int WC_WR_ID = 0;
  static final int WC_STATUS = 8;
  static final int WC_OPCODE = 12;
  static final int WC_BYTE_LEN = 16;
  static final int WC_QP_NUM = 20;
  static final int WC_VENDOR_STATUS = 32;

  /** {@code HPCN_ACCESS_*}: what a registration or window grants besides local write. */
  static final int ACCESS_WINDOWS = 1;
  static final int ACCESS_REMOTE_READ = 2;
  static final int ACCESS_REMOTE_WRITE = 4;

  /** {@code hpcn_wc_status_t}. */
  static final int WC_SUCCESS = 0;
  static final int WC_FLUSHED = 1;

  /** {@code sizeof(hpcn_cm_event_t)} and field offsets. */
  static final int CM_SIZE = 96;
  static final int CM_ID = 0;
  static final int CM_LISTEN_ID = 8;
  static final int CM_TYPE = 16;
  static final int CM_STATUS = 20;
  static final int CM_PRIVATE_DATA_LEN = 24;
  static final int CM_RESPONDER_RESOURCES = 28;
  static final int CM_INITIATOR_DEPTH = 30;
  static final int CM_PRIVATE_DATA = 32;

  /** {@code hpcn_cm_event_type_t}. */
  static final int CM_OTHER = 0;
  static final int CM_ADDR_RESOLVED = 1;
  static final int CM_ADDR_ERROR = 2;
  static final int CM_ROUTE_RESOLVED = 3;
  static final int CM_ROUTE_ERROR = 4;
  static final int CM_CONNECT_REQUEST = 5;
  static final int CM_CONNECT_ERROR = 6;
  static final int CM_UNREACHABLE = 7;
  static final int CM_REJECTED = 8;
  static final int CM_ESTABLISHED = 9;
  static final int CM_DISCONNECTED = 10;
  static final int CM_DEVICE_REMOVAL = 11;

  /** {@code HPCN_WAIT_*} bits returned by {@link #waitEvents}. */
  static final int WAIT_CQ = 1;
  static final int WAIT_CM = 2;
  static final int WAIT_WAKE = 4;

  static String cmEventName(int type) {
    switch (type) {
      case CM_ADDR_RESOLVED: return "ADDR_RESOLVED";
      case CM_ADDR_ERROR: return "ADDR_ERROR";
      case CM_ROUTE_RESOLVED: return "ROUTE_RESOLVED";
      case CM_ROUTE_ERROR: return "ROUTE_ERROR";
      case CM_CONNECT_REQUEST: return "CONNECT_REQUEST";
      case CM_CONNECT_ERROR: return "CONNECT_ERROR";
      case CM_UNREACHABLE: return "UNREACHABLE";
      case CM_REJECTED: return "REJECTED";
      case CM_ESTABLISHED: return "ESTABLISHED";
      case CM_DISCONNECTED: return "DISCONNECTED";
      case CM_DEVICE_REMOVAL: return "DEVICE_REMOVAL";
      default: return "OTHER";
    }
  }

  // ---- slow path -------------------------------------------------------------------------

  /** A transport context on {@code device} with a CQ of {@code cqEntries}. */
  static native long open(String device, int cqEntries) throws NativeIoException;

  /** Releases the context; fails with EBUSY while ids or registrations are alive. */
  static native void close(long ctx) throws NativeIoException;

  static native int liveIds(long ctx);

  static native int liveMrs(long ctx);

  static native int cqSize(long ctx);

  static native void resizeCq(long ctx, int entries) throws NativeIoException;

  /** Binds {@code ip:port} (4- or 16-byte address; port 0: any) and listens; the id. */
  static native long listen(long ctx, byte[] ip, int port, int backlog) throws NativeIoException;

  /** The local port of an id, or -errno. */
  static native int localPort(long id);

  /** Creates an id and starts address resolution; ADDR_RESOLVED/ADDR_ERROR follows. */
  /** The peer's address of {@code id}: 4 or 16 address bytes, then 2 port bytes (network order). */
  static native byte[] peerAddress(long id) throws NativeIoException;

  static native long connectStart(long ctx, byte[] ip, int port, int timeoutMs)
      throws NativeIoException;

  static native void resolveRoute(long id, int timeoutMs) throws NativeIoException;

  /** Creates the RC QP of {@code id} on the context's PD and CQ; the QP number. */
  static native int createQp(long ctx, long id, int sendDepth, int recvDepth)
      throws NativeIoException;

  static native void connect(long ctx, long id, byte[] privateData) throws NativeIoException;

  static native void accept(long ctx, long id, byte[] privateData, int peerResponderResources,
      int peerInitiatorDepth) throws NativeIoException;

  static native int reject(long id);

  /**
   * rdma_notify(IBV_EVENT_COMM_EST): a message arrived on an accepted connection before its
   * ESTABLISHED event (the peer's RTU may have been lost); 0 or -errno (harmless when it was
   * already established).
   */
  static native int notifyEstablished(long id);

  /** rdma_disconnect: QP to error (posted work flushes), peer told. 0 or -errno. */
  static native int disconnect(long id);

  /** Destroys the id's QP (if any) and the id. */
  static native void destroyId(long ctx, long id) throws NativeIoException;

  /**
   * Registers {@code length} bytes from {@code offset} of a direct buffer with local write and
   * the {@code ACCESS_*} bits of {@code access}; writes address, lkey and rkey to
   * {@code info[0..2]} and returns the handle.
   */
  static native long regMr(long ctx, ByteBuffer memory, long offset, long length, int access,
      long[] info) throws NativeIoException;

  /** True when the device has type 2 memory windows (the transport needs them). */
  static native boolean hasWindows(long ctx);

  /** A type 2 memory window on the context's PD (unbound); its handle. Any thread. */
  static native long mwAlloc(long ctx) throws NativeIoException;

  /** Deallocates (and so invalidates) a window. Any thread. */
  static native void mwDealloc(long ctx, long handle) throws NativeIoException;

  static native int liveMws(long ctx);

  static native void deregMr(long ctx, long handle) throws NativeIoException;

  static native String wcStatusText(int vendorStatus);

  // ---- data path -------------------------------------------------------------------------

  /** Thread-safe wakeup of {@link #waitEvents}. */
  static native int wake(long ctx);

  /** Blocks up to {@code timeoutMs} for CQ/cm/wakeup activity; WAIT_* bits or -errno. */
  static native int waitEvents(long ctx, int timeoutMs);

  /** Up to {@code max} hpcn_wc_t records into {@code records} (direct); count or -errno. */
  static native int pollCq(long ctx, ByteBuffer records, int max);

  /** Up to {@code max} hpcn_cm_event_t records into {@code records} (direct); count or -errno. */
  static native int pollCm(long ctx, ByteBuffer records, int max);

  /** Signalled SEND of a header SGE and, when {@code len > 0}, a payload SGE. */
  static native int postSend(long id, long wrId, long hdrAddr, int hdrLen, int hdrLkey, long addr,
      int len, int lkey);

  /**
   * Signalled bind of window {@code mw} to {@code [addr, addr + len)} of registration
   * {@code mr} with the {@code ACCESS_REMOTE_*} bits of {@code access}, usable through this
   * QP only; the new rkey (0 .. 2^32-1) or -errno.
   */
  static native long postBind(long id, long wrId, long mw, long mr, long addr, int len,
      int access);

  /** Signalled local invalidate of a window key bound on this QP; 0 or -errno. */
  static native int postLocalInv(long id, long wrId, int rkey);

  /** RECV scattering into a header SGE and, when {@code len > 0}, a payload SGE. */
  static native int postRecv(long id, long wrId, long hdrAddr, int hdrLen, int hdrLkey, long addr,
      int len, int lkey);

  /** Signalled RDMA READ ({@code read}) or WRITE between local memory and a remote region. */
  static native int postRdma(long id, long wrId, boolean read, long addr, int len, int lkey,
      long remoteAddr, int rkey);
}
