/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;

/**
 * One rule: a one-sided read or write from the peer touches only bytes of a region this side
 * exposes and still exposes. The range is checked against the region (and against negative
 * offsets and lengths) and the region is checked to be exposed under its lock while its bytes
 * are copied; anything else is answered with an {@link TcpFrame#ERROR} frame naming the
 * problem. This is one connection's serving of the peer's READ_REQUEST and WRITE_REQUEST
 * frames against the transport's exposed regions, answered with pooled frames.
 *
 * <p>Belongs to the connection's event loop, as its connection does.
 */
final class TcpRegionServer {
  private final TcpConnection conn;
  private final TcpTransport transport;
  private final BufferPool pool;
  private final TcpOutbound outbound;

  TcpRegionServer(TcpConnection conn, TcpTransport transport, TcpOutbound outbound) {
    this.conn = conn;
    this.transport = transport;
    this.pool = transport.bufferPool();
    this.outbound = outbound;
  }

  /** Serves a read; false when it needs a buffer the pool cannot give yet. */
  boolean serveRead(long opId, long regionKey, long offset, int length) {
    TcpTransport.ExposedRegion region = transport.region(regionKey);
    String problem = checkRegion("read", region, regionKey, offset, length);
    if (problem != null) {
      outbound.queueServed(TcpFrame.ERROR, opId, null, problem);
      return true;
    }
    Buffer data = pool.allocate(length);
    if (data == null) {
      return false;
    }
    synchronized (region) {
      if (region.exposed) {
        data.nio().put(0, region.view, (int) offset, length);
      } else {
        problem = notExposed(regionKey);
      }
    }
    if (problem != null) {
      data.release();
      outbound.queueServed(TcpFrame.ERROR, opId, null, problem);
    } else {
      outbound.queueServed(TcpFrame.READ_RESPONSE, opId, data, null);
    }
    return true;
  }

  /** Serves a write of {@code data} (null for an empty write), which it releases. */
  void serveWrite(long opId, long regionKey, long offset, Buffer data) {
    int length = data == null ? 0 : data.readableBytes();
    TcpTransport.ExposedRegion region = transport.region(regionKey);
    String problem = checkRegion("write", region, regionKey, offset, length);
    if (problem == null && length > 0) {
      synchronized (region) {
        if (region.exposed) {
          region.view.put((int) offset, data.nio(), 0, length);
        } else {
          problem = notExposed(regionKey);
        }
      }
    }
    if (data != null) {
      data.release();
    }
    if (problem != null) {
      outbound.queueServed(TcpFrame.ERROR, opId, null, problem);
    } else {
      outbound.queueServed(TcpFrame.WRITE_ACK, opId, null, null);
    }
  }

  private String checkRegion(String what, TcpTransport.ExposedRegion region, long regionKey,
      long offset, int length) {
    if (region == null) {
      return notExposed(regionKey);
    }
    int capacity = region.view.capacity();
    if (offset < 0 || length < 0 || offset > capacity - length) {
      return what + " of [" + offset + ", " + (offset + length) + ") is outside region "
          + regionKey + " of " + capacity + " bytes on " + conn.localAddress();
    }
    return null;
  }

  private String notExposed(long regionKey) {
    return "region " + regionKey + " is not exposed on " + conn.localAddress();
  }
}
