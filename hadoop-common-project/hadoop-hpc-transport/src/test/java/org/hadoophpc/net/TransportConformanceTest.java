/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.IO_TIMEOUT_KEY;
import static org.hadoophpc.net.TransportConfigKeys.MAX_INFLIGHT_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The transport contract, as one suite every implementation passes unchanged: a subclass only
 * says how to make its transport ({@link #newTransport}) and, for RDMA, where to bind
 * ({@link #bindAddress}). Each test starts a server and a client transport in this JVM, checks
 * contents by pattern or checksum, and ends by closing both and checking that neither pool has a
 * buffer outstanding. No assertion depends on timing; waits are bounded only to never hang.
 *
 * <p>In three parts, each extending the one before, on {@link TransportFixture}:
 * {@link TransportDataContract} (file answers, ordering, sizes, one-sided),
 * {@link TransportLoadAndFailureContract} (concurrency, back-pressure, failures, metrics) and
 * this class (completions and answers by request id).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class TransportConformanceTest extends TransportLoadAndFailureContract {
  // ------------------------------------------------------------------ callbacks

  /** A caller's completion: records how often and how it was called. */
  private static final class Recorder<T> implements Completion<T> {
    final CompletableFuture<T> outcome = new CompletableFuture<>();
    final AtomicInteger calls = new AtomicInteger();

    @Override
    public void completed(T result) {
      calls.incrementAndGet();
      outcome.complete(result);
    }

    @Override
    public void failed(Throwable cause) {
      calls.incrementAndGet();
      outcome.completeExceptionally(cause);
    }
  }

  /** A received request held by a test: where it came from, its id, its buffer. */
  private record Held(Connection connection, long id, Buffer request) {
    void respond() {
      connection.respond(id, request);
    }
  }

  /** A handler that keeps every request, answering through the id form (no Responder). */
  private static final class Holding implements RequestHandler {
    final Queue<Held> held = new ConcurrentLinkedQueue<>();

    @Override
    public void onRequest(Connection conn, Buffer request, long requestId) {
      held.add(new Held(conn, requestId, request));
    }

    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      throw new AssertionError("transports deliver requests by id");
    }
  }

  @Test
  void callbackRequestsEachCompleteOnceWithTheirOwnResponse() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    int batch = 8;
    for (int round = 0; round < 50; round++) {
      List<Recorder<Buffer>> recorders = new ArrayList<>();
      for (int i = 0; i < batch; i++) {
        int n = round * batch + i;
        Buffer request = filled(client.bufferPool(), 200 + i, n);
        request.nio().putInt(0, n);
        Recorder<Buffer> r = new Recorder<>();
        assertTrue(connection.request(request, r), "no back-pressure below max.inflight");
        recorders.add(r);
      }
      waitFor(() -> handler.held.size() == batch, "a batch arrives");
      // Answered in reverse order of arrival: completions match by operation, not order.
      List<Held> arrivedInOrder = new ArrayList<>(handler.held);
      handler.held.clear();
      for (int i = batch - 1; i >= 0; i--) {
        arrivedInOrder.get(i).respond();
      }
      for (int i = 0; i < batch; i++) {
        Buffer response = await(recorders.get(i).outcome);
        assertEquals(200 + i, response.readableBytes());
        assertEquals(round * batch + i, response.nio().getInt(0));
        assertEquals(pattern(round * batch + i, 199 + i), response.nio().get(199 + i));
        response.release();
        assertEquals(1, recorders.get(i).calls.get());
      }
    }
    assertEquals(0, connection.inFlight());
  }

  /**
   * Requests sent together, each with a completion of its own (a stream's data and the places
   * for its answers), are each answered once through their own, whatever the answers' order;
   * on a closed connection each fails through its own.
   */
  @Test
  @SuppressWarnings("unchecked")
  void requestsSentTogetherCompleteThroughTheirOwnCompletions() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    int batch = 5;
    Buffer[] requests = new Buffer[batch];
    Completion<Buffer>[] completions = new Completion[batch];
    List<Recorder<Buffer>> recorders = new ArrayList<>();
    for (int i = 0; i < batch; i++) {
      requests[i] = filled(client.bufferPool(), 100 + i, i);
      requests[i].nio().putInt(0, i);
      Recorder<Buffer> r = new Recorder<>();
      recorders.add(r);
      completions[i] = r;
    }
    assertEquals(batch, connection.request(requests, completions, batch));
    waitFor(() -> handler.held.size() == batch, "the requests arrive");
    List<Held> arrived = new ArrayList<>(handler.held);
    handler.held.clear();
    for (int i = batch - 1; i >= 0; i--) {
      arrived.get(i).respond();
    }
    for (int i = 0; i < batch; i++) {
      Buffer response = await(recorders.get(i).outcome);
      assertEquals(100 + i, response.readableBytes(), "request " + i + "'s own answer");
      assertEquals(i, response.nio().getInt(0));
      response.release();
      assertEquals(1, recorders.get(i).calls.get());
    }
    connection.close();
    List<Recorder<Buffer>> late = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      requests[i] = filled(client.bufferPool(), 10, i);
      Recorder<Buffer> r = new Recorder<>();
      late.add(r);
      completions[i] = r;
    }
    assertEquals(2, connection.request(requests, completions, 2), "taken, and failed");
    for (Recorder<Buffer> r : late) {
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.outcome.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertInstanceOf(TransportException.class, e.getCause());
      assertEquals(1, r.calls.get());
    }
  }

  @Test
  void callbackOneSidedReadsAndWritesMoveTheBytes() throws Exception {
    start(baseConf(), echo());
    int size = 64 << 10;
    RemoteRegion region = exposeFilled(size, 21);
    ByteBuffer target = exposedBuffer(0).nio();
    Buffer src = filled(client.bufferPool(), 10_000, 22);
    Recorder<Void> written = new Recorder<>();
    assertTrue(connection.write(src, region, 1234, written));
    assertNull(await(written.outcome));
    assertEquals(0, src.nio().position(), "a write leaves the source's position");
    assertEquals(-1, target.slice(1234, 10_000).mismatch(src.nio().slice(0, 10_000)));
    Buffer dst = client.bufferPool().allocate(size);
    Recorder<Void> read = new Recorder<>();
    assertTrue(connection.read(region, 0, size, dst, read));
    assertNull(await(read.outcome));
    assertEquals(size, dst.nio().position());
    assertEquals(-1, dst.nio().flip().mismatch(target.slice(0, size)));
    dst.nio().clear();
    Recorder<Void> nothing = new Recorder<>();
    assertTrue(connection.read(region, 0, 0, dst, nothing));
    assertNull(await(nothing.outcome));
    assertEquals(1, written.calls.get());
    assertEquals(1, read.calls.get());
    assertEquals(1, nothing.calls.get());
    src.release();
    dst.release();
  }

  @Test
  void callbackBackPressureIsFalseAndTheCallerKeepsItsBuffer() throws Exception {
    Holding handler = new Holding();
    start(conf(MAX_INFLIGHT_KEY, "4"), handler);
    RemoteRegion region = exposeFilled(4096, 1);
    List<Recorder<Buffer>> recorders = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      Buffer request = client.bufferPool().allocate(16);
      request.nio().putInt(0, i);
      Recorder<Buffer> r = new Recorder<>();
      assertTrue(connection.request(request, r), "call " + (i + 1) + " of max.inflight=4");
      recorders.add(r);
    }
    assertEquals(4, connection.inFlight());
    Buffer fifth = client.bufferPool().allocate(16);
    Recorder<Buffer> refused = new Recorder<>();
    assertFalse(connection.request(fifth, refused), "the 5th call is back-pressure");
    assertEquals(1, fifth.refCnt(), "the caller keeps its buffer under back-pressure");
    Buffer dst = client.bufferPool().allocate(16);
    Recorder<Void> refusedOneSided = new Recorder<>();
    assertFalse(connection.read(region, 0, 16, dst, refusedOneSided));
    assertFalse(connection.write(dst, region, 0, refusedOneSided));

    waitFor(() -> handler.held.size() == 4, "four requests arrive");
    for (Held h; (h = handler.held.poll()) != null; ) {
      h.respond(); // from this (non-transport) thread
    }
    for (int i = 0; i < 4; i++) {
      Buffer response = await(recorders.get(i).outcome);
      assertEquals(i, response.nio().getInt(0));
      response.release();
    }
    assertEquals(0, refused.calls.get(), "a refused call's completion is never called");
    assertEquals(0, refusedOneSided.calls.get());
    Recorder<Buffer> again = new Recorder<>();
    assertTrue(connection.request(fifth, again), "calls succeed again once responses arrived");
    waitFor(() -> !handler.held.isEmpty(), "the request after back-pressure arrives");
    handler.held.poll().respond();
    await(again.outcome).release();
    dst.release();
  }

  @Test
  void callbacksFailWhenThePeerDiesAndAtOnceOnAClosedConnection() throws Exception {
    Holding handler = new Holding();
    start(baseConf(), handler);
    RemoteRegion region = exposeFilled(1 << 20, 3);
    List<Recorder<Buffer>> requests = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Recorder<Buffer> r = new Recorder<>();
      assertTrue(connection.request(filled(client.bufferPool(), 64 << 10, i), r));
      requests.add(r);
    }
    List<Buffer> destinations = new ArrayList<>();
    List<Recorder<Void>> reads = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Buffer dst = client.bufferPool().allocate(1 << 20);
      destinations.add(dst);
      Recorder<Void> r = new Recorder<>();
      assertTrue(connection.read(region, 0, 1 << 20, dst, r));
      reads.add(r);
    }
    waitFor(() -> handler.held.size() == 5, "the server holds all five requests");
    server.close();
    for (Recorder<Buffer> r : requests) {
      failure(r.outcome, ConnectionClosedException.class);
      assertEquals(1, r.calls.get());
    }
    for (Recorder<Void> r : reads) {
      // A read may have completed before the close; if not, it fails as closed.
      try {
        r.outcome.get(WAIT_SECONDS, TimeUnit.SECONDS);
      } catch (ExecutionException e) {
        assertInstanceOf(ConnectionClosedException.class, e.getCause());
      }
      assertEquals(1, r.calls.get());
    }
    for (Buffer d : destinations) {
      d.release();
    }
    // Late answers go nowhere and leak nothing; a second one is still refused.
    Held late = handler.held.poll();
    late.respond();
    assertThrows(IllegalStateException.class, () -> late.connection().fail(late.id(), "again"));
    for (Held h; (h = handler.held.poll()) != null; ) {
      h.connection().fail(h.id(), "too late");
      h.request().release();
    }
    waitUntilClosed(connection);
    Recorder<Buffer> afterDeath = new Recorder<>();
    Buffer after = client.bufferPool().allocate(8);
    assertTrue(connection.request(after, afterDeath), "a closed connection is no back-pressure");
    assertTrue(afterDeath.outcome.isDone(), "failed at once, on the calling thread");
    failure(afterDeath.outcome, ConnectionClosedException.class);
    assertEquals(0, after.refCnt(), "the transport released the request it could not send");
  }

  @Test
  void callbackRequestTimesOutAndALateAnswerIsDropped() throws Exception {
    Holding handler = new Holding();
    start(conf(IO_TIMEOUT_KEY, "1s"), handler);
    Recorder<Buffer> r = new Recorder<>();
    assertTrue(connection.request(client.bufferPool().allocate(8), r));
    TransportTimeoutException e = failure(r.outcome, TransportTimeoutException.class);
    assertTrue(e.getMessage().contains("io.timeout"), e.getMessage());
    assertEquals(0, connection.inFlight());
    waitFor(() -> !handler.held.isEmpty(), "the request arrived");
    handler.held.poll().respond();
    Recorder<Buffer> next = new Recorder<>();
    assertTrue(connection.request(client.bufferPool().allocate(8), next));
    waitFor(() -> !handler.held.isEmpty(), "the next request arrived");
    handler.held.poll().respond();
    await(next.outcome).release();
    assertEquals(1, r.calls.get(), "the late answer did not reach the timed-out completion");
  }

  @Test
  void answersThroughAnOlderRequestsIdOrResponderAreRefusedAndAnswerNothing() throws Exception {
    // max.inflight=1: the server's state for the second request reuses the first one's place.
    Queue<Object[]> held = new ConcurrentLinkedQueue<>();
    start(conf(MAX_INFLIGHT_KEY, "1"), new RequestHandler() {
      private long lastId;

      @Override
      public void onRequest(Connection conn, Buffer request, long requestId) {
        // Both forms at once: the id, and the Responder the default wraps around it.
        lastId = requestId;
        RequestHandler.super.onRequest(conn, request, requestId);
      }

      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        held.add(new Object[] {conn, responder, lastId, request});
      }
    });
    Buffer first = client.bufferPool().allocate(4);
    first.nio().putInt(0, 1);
    CompletableFuture<Buffer> f1 = connection.request(first);
    waitFor(() -> held.size() == 1, "the first request arrives");
    Object[] one = held.poll();
    RequestHandler.Responder r1 = (RequestHandler.Responder) one[1];
    r1.respond((Buffer) one[3]);
    assertThrows(IllegalStateException.class, () -> r1.respond((Buffer) one[3]),
        "responding twice");
    assertThrows(IllegalStateException.class, () -> r1.fail("twice"));
    Buffer response1 = await(f1);
    assertEquals(1, response1.nio().getInt(0));
    response1.release();

    Buffer second = client.bufferPool().allocate(4);
    second.nio().putInt(0, 2);
    CompletableFuture<Buffer> f2 = connection.request(second);
    waitFor(() -> held.size() == 1, "the second request arrives");
    Object[] two = held.poll();
    Connection serverSide = (Connection) two[0];
    long oldId = (Long) one[2];
    Buffer stale = server.bufferPool().allocate(4);
    stale.nio().putInt(0, -1);
    assertThrows(IllegalStateException.class, () -> r1.respond(stale),
        "the first request's responder, after its state was reused");
    assertThrows(IllegalStateException.class, () -> serverSide.respond(oldId, stale));
    assertThrows(IllegalStateException.class, () -> serverSide.fail(oldId, "stale"));
    assertEquals(1, stale.refCnt(), "a refused response stays the caller's");
    stale.release();
    assertFalse(f2.isDone(), "nothing answered the second request");
    ((RequestHandler.Responder) two[1]).respond((Buffer) two[3]);
    Buffer response2 = await(f2);
    assertEquals(2, response2.nio().getInt(0), "the second request got its own answer");
    response2.release();
  }

  @Test
  void throwingCallbacksLeaveTheConnectionAndTheOthersServing() throws Exception {
    CountDownLatch closedSeen = new CountDownLatch(1);
    start(baseConf(), new RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        responder.respond(request);
      }

      @Override
      public void onClose(Connection conn) {
        closedSeen.countDown();
        throw new IllegalStateException("handler bug in onClose");
      }
    });
    Connection other = await(client.connect(listener.address()));
    Recorder<Buffer> seen = new Recorder<>();
    Completion<Buffer> throwing = new Completion<>() {
      @Override
      public void completed(Buffer result) {
        result.release();
        seen.completed(null);
        throw new IllegalStateException("caller bug in completed");
      }

      @Override
      public void failed(Throwable cause) {
        seen.failed(cause);
      }
    };
    assertTrue(connection.request(client.bufferPool().allocate(16), throwing));
    await(seen.outcome);
    echoRoundTrip(100, 1); // the connection whose completion threw still serves
    other.close();
    assertTrue(closedSeen.await(WAIT_SECONDS, TimeUnit.SECONDS), "server onClose ran");
    echoRoundTrip(5000, 2); // and the server, whose onClose threw, serves the others
    assertTrue(connection.isOpen());
  }

}
