/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RequestHandler;

/**
 * The NodeManager's service, able to fall silent the way a sick node does: once armed with
 * {@link #stallReads}, it swallows that many read requests of a partition past its first byte
 * (mid-stream), never answering them. The NodeManagers of a MiniYARNCluster share this JVM, so
 * a test arms it from outside.
 */
public class SickShuffleHandler extends HpcShuffleHandler {
  /** Reads (past a partition's start) still to swallow, service-wide. */
  static final AtomicInteger STALL_READS = new AtomicInteger();
  /** Reads swallowed so far. */
  static final AtomicInteger STALLED = new AtomicInteger();

  /** Every started instance (the NodeManagers of this JVM), for tests that stop one. */
  static final java.util.List<SickShuffleHandler> STARTED =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  @Override
  protected void serviceStart() throws Exception {
    super.serviceStart();
    STARTED.add(this);
  }

  @Override
  protected void serviceStop() throws Exception {
    STARTED.remove(this);
    super.serviceStop();
  }

  static void stallReads(int n) {
    STALLED.set(0);
    STALL_READS.set(n);
  }

  @Override
  protected RequestHandler handler(RequestHandler server) {
    return new RequestHandler() {
      @Override
      public boolean authenticates() {
        return server.authenticates();
      }

      @Override
      public void onRequest(Connection c, Buffer request, Responder responder) {
        // a read is MAGIC(4) VERSION(1) TYPE(1)=2, session(8), map(4), offset(8), length(4)
        java.nio.ByteBuffer b = request.nio();
        if (b.remaining() >= 30 && b.get(b.position() + 5) == 2
            && b.getLong(b.position() + 18) > 0 && STALL_READS.getAndUpdate(
                n -> n > 0 ? n - 1 : 0) > 0) {
          STALLED.incrementAndGet();
          request.release(); // and never answer
          return;
        }
        server.onRequest(c, request, responder);
      }

      @Override
      public void onClose(Connection c) {
        server.onClose(c);
      }
    };
  }
}
