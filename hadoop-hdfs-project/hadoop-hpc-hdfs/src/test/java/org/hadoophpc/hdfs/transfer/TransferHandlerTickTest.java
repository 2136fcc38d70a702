/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The DataNode's timer work ({@link TransferHandler#tick()}) survives a stream whose work
 * throws: that stream's connection closes, the other streams still have their parked PULLs
 * answered, and the next tick runs (an exception escaping would end the timer's schedule).
 */
class TransferHandlerTickTest {
  private final BufferPool pool = new BufferPool(1 << 20, 64 << 10, 64 << 10,
      BufferPool.MemoryRegistrar.NONE);
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void tearDown() {
    timer.shutdownNow();
    pool.close();
  }

  /** A connection that records answers; once {@code failing}, answering throws. */
  private static final class Recording extends FakeConnection {
    final List<Long> answered = new CopyOnWriteArrayList<>();
    volatile boolean failing;

    @Override
    public void respond(long requestId, Buffer response) {
      if (failing) {
        throw new IllegalArgumentException("test: this connection cannot answer");
      }
      response.release();
      answered.add(requestId);
    }

    @Override
    public void fail(long requestId, int code, String message) {
      answered.add(requestId);
    }
  }

  private Buffer request(byte type, boolean hello) {
    Buffer b = pool.allocate(hello ? TransferWire.HELLO_BYTES : TransferWire.REQUEST_HEADER);
    TransferWire.requestHeader(b.nio(), type, (byte) 0, 0);
    if (hello) {
      b.nio().putInt(TransferWire.MAGIC).putShort(TransferWire.VERSION)
          .put((byte) TransferMetrics.Role.CLIENT.ordinal()).putInt(1);
    }
    b.nio().flip();
    return b;
  }

  @Test
  void aStreamWhoseTimerWorkThrowsDoesNotStopTheTimerForTheOthers() throws Exception {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.hpc.transport.io.timeout", "300ms"); // PULLs parked at most 100 ms
    TransferConf tc = TransferConf.from(conf);
    TransferHandler handler = new TransferHandler(pool, tc, TransferMetrics.of("tick-test"),
        new TransferPeerServer(4, "tick-test"), new InetSocketAddress("127.0.0.1", 1), timer);
    timer.shutdownNow(); // the test runs the ticks itself
    Recording bad = new Recording();
    Recording good = new Recording();
    for (Recording c : new Recording[] {bad, good}) {
      handler.onRequest(c, request(TransferWire.HELLO, true), 1);
      handler.onRequest(c, request(TransferWire.PULL, false), 2);
      assertTrue(c.answered.contains(1L), "HELLO answered");
      assertFalse(c.answered.contains(2L), "PULL parked");
    }
    bad.failing = true;
    Thread.sleep(150);
    assertDoesNotThrow(handler::tick, "one stream's failure must not escape the timer");
    assertTrue(good.answered.contains(2L), "the other stream's parked PULL answered");
    assertFalse(bad.open, "the failing stream's connection closed");
    assertDoesNotThrow(handler::tick, "and the next tick runs too");
    handler.closeAll();
  }
}
