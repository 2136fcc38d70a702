/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportConformanceTest;
import org.junit.jupiter.api.Test;

/** The transport contract over the tcp transport on loopback. */
class TcpTransportTest extends TransportConformanceTest {
  @Override
  protected Transport newTransport(Configuration conf) throws Exception {
    return new TcpTransport(TransportConf.from(conf));
  }

  @Override
  protected boolean sendsFiles() {
    return true;
  }

  /**
   * Several requests handed over in one call, and several answers in one call (one gathering
   * write each on tcp): every request is answered with its own answer; an id answered before
   * is skipped (its buffer released) instead of throwing, and the connection stays up.
   */
  @Test
  void requestsAndAnswersHandedOverTogether() throws Exception {
    int n = 5;
    List<Long> ids = new ArrayList<>();
    List<Integer> values = new ArrayList<>();
    start(baseConf(), answeredById((conn, request, requestId) -> {
      int value = request.nio().getInt(request.nio().position());
      request.release();
      List<Long> batch = null;
      List<Integer> batchValues = null;
      synchronized (ids) {
        ids.add(requestId);
        values.add(value);
        if (ids.size() == n) {
          batch = new ArrayList<>(ids);
          batchValues = new ArrayList<>(values);
        }
      }
      if (batch != null) {
        conn.respond(batch.get(0), answer(batchValues.get(0) * 10));
        long[] answerIds = new long[n];
        Buffer[] answers = new Buffer[n];
        for (int i = 0; i < n; i++) {
          answerIds[i] = batch.get(i);
          answers[i] = answer(batchValues.get(i) * 10);
        }
        conn.respond(answerIds, answers, n); // the first was answered: skipped
      }
    }));
    Buffer[] requests = new Buffer[n];
    for (int i = 0; i < n; i++) {
      requests[i] = client.bufferPool().allocate(4);
      requests[i].nio().putInt(i + 1).flip();
    }
    List<Integer> got = new ArrayList<>();
    CountDownLatch all = new CountDownLatch(n);
    assertEquals(n, connection.request(requests, n, new Completion<Buffer>() {
      @Override
      public void completed(Buffer answer) {
        synchronized (got) {
          got.add(answer.nio().getInt(answer.nio().position()));
        }
        answer.release();
        all.countDown();
      }

      @Override
      public void failed(Throwable cause) {
        synchronized (got) {
          got.add(-1);
        }
        all.countDown();
      }
    }));
    assertTrue(all.await(WAIT_SECONDS, TimeUnit.SECONDS), "answers: " + got);
    synchronized (got) {
      got.sort(null);
      assertEquals(List.of(10, 20, 30, 40, 50), got);
    }
    assertTrue(connection.isOpen());
  }

  private Buffer answer(int value) {
    Buffer b = server.bufferPool().allocate(4);
    b.nio().putInt(value).flip();
    return b;
  }

  /**
   * A file that turns out shorter than the answer promised cannot be framed any more: the
   * connection breaks (the request fails, with the reason) instead of hanging or sending junk.
   */
  @Test
  void aFileShorterThanItsAnswerBreaksTheConnection() throws Exception {
    java.nio.file.Path f = patternFile(1000);
    AtomicInteger direct = new AtomicInteger();
    try (FileChannel ch = FileChannel.open(f)) {
      start(baseConf(), fileAnswers(ch, direct));
      CompletableFuture<Buffer> r = connection.request(fileRequest(500, 100_000));
      ExecutionException e = assertThrows(ExecutionException.class,
          () -> r.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertTrue(String.valueOf(e.getCause().getMessage()).length() > 0, e.toString());
      waitFor(() -> !connection.isOpen(), "the connection to close");
    }
  }

  /**
   * A file answer with a head: the peer receives the head's bytes and then the file region as
   * one ordinary answer, and the answerer learns when the file is no longer needed.
   */
  @Test
  void aFileAnswerCarriesItsHeadFirstAndTellsWhenTheFileIsFree() throws Exception {
    java.nio.file.Path f = patternFile(100_000);
    CompletableFuture<Void> fileFree = new CompletableFuture<>();
    try (FileChannel ch = FileChannel.open(f)) {
      start(baseConf(), answeredById((conn, request, requestId) -> {
        request.release();
        Buffer head = server.bufferPool().allocate(3);
        head.nio().put((byte) 'h').put((byte) 'e').put((byte) 'd').flip();
        assertTrue(conn.respondFile(requestId, head, ch, 1000, 60_000, new Completion<Void>() {
          @Override
          public void completed(Void v) {
            fileFree.complete(null);
          }

          @Override
          public void failed(Throwable cause) {
            fileFree.completeExceptionally(cause);
          }
        }));
      }));
      Buffer answer = connection.request(fileRequest(0, 0)).get(WAIT_SECONDS, TimeUnit.SECONDS);
      fileFree.get(WAIT_SECONDS, TimeUnit.SECONDS);
      try {
        ByteBuffer a = answer.nio();
        assertEquals(3 + 60_000, a.remaining());
        assertEquals('h', a.get());
        assertEquals('e', a.get());
        assertEquals('d', a.get());
        ByteBuffer expected = ByteBuffer.wrap(java.nio.file.Files.readAllBytes(f), 1000, 60_000);
        assertEquals(expected, a);
      } finally {
        answer.release();
      }
    }
  }

  /**
   * Several file spans (of two files, one of them empty, one across the socket's buffer) make
   * one answer: the peer receives their bytes in order, nothing between them.
   */
  @Test
  void spansOfSeveralFilesMakeOneAnswer() throws Exception {
    java.nio.file.Path a = patternFile(100_000);
    java.nio.file.Path b = patternFile(3000);
    try (FileChannel ca = FileChannel.open(a); FileChannel cb = FileChannel.open(b)) {
      start(baseConf(), answeredById((conn, request, requestId) -> {
        request.release();
        assertTrue(conn.respondFiles(requestId, java.util.List.of(
            new org.hadoophpc.net.FileSpan(ca, 10, 70_000),
            new org.hadoophpc.net.FileSpan(cb, 0, 0),
            new org.hadoophpc.net.FileSpan(cb, 7, 2993),
            new org.hadoophpc.net.FileSpan(ca, 0, 5))));
      }));
      for (int round = 0; round < 3; round++) {
        Buffer answer = connection.request(fileRequest(0, 0)).get(WAIT_SECONDS,
            TimeUnit.SECONDS);
        try {
          ByteBuffer got = answer.nio();
          assertEquals(70_000 + 2993 + 5, got.remaining());
          byte[] fa = java.nio.file.Files.readAllBytes(a);
          byte[] fb = java.nio.file.Files.readAllBytes(b);
          ByteBuffer expected = ByteBuffer.allocate(got.remaining());
          expected.put(fa, 10, 70_000).put(fb, 7, 2993).put(fa, 0, 5).flip();
          assertEquals(expected, got);
        } finally {
          answer.release();
        }
      }
    }
  }

  @Test
  void fileAnswersAboveTheMaximumAreRefusedBeforeAnythingIsSent() throws Exception {
    java.nio.file.Path f = patternFile(10);
    try (FileChannel ch = FileChannel.open(f)) {
      AtomicInteger refused = new AtomicInteger();
      start(conf(TransportConfigKeys.MAX_MESSAGE_SIZE_KEY, "64k"),
          (conn, request, responder) -> {
            request.release();
            try {
              responder.respondFile(ch, 0, 65 * 1024);
            } catch (IllegalArgumentException e) {
              refused.incrementAndGet();
              responder.fail(e.getMessage());
            }
          });
      CompletableFuture<Buffer> r = connection.request(fileRequest(0, 1));
      assertThrows(ExecutionException.class, () -> r.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertEquals(1, refused.get());
      assertTrue(connection.isOpen());
    }
  }

  /**
   * Callers write their own frames when the connection is idle, else through the loop: many
   * threads sharing one connection, with answers made on other threads than the loop and
   * messages larger than the socket takes at once (the loop finishes what a caller began),
   * still get every answer, byte for byte, to the request that asked for it.
   */
  @Test
  void oneConnectionSharedByManyThreadsWithAnswersFromOtherThreads() throws Exception {
    int threads = 4;
    int perThread = 60;
    int window = 4;
    ExecutorService answerers = Executors.newFixedThreadPool(3);
    ExecutorService callers = Executors.newFixedThreadPool(threads);
    try {
      RequestHandlerOnPool handler = new RequestHandlerOnPool(answerers);
      start(baseConf(), handler);
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        long seed = t;
        results.add(callers.submit(() -> {
          Random random = new Random(seed);
          return checkedRequests(connection, seed * 1000, perThread, window,
              i -> random.nextInt(8) == 0 ? (2 << 20) - random.nextInt(4096)
                  : 1 + random.nextInt(64 << 10));
        }));
      }
      int total = 0;
      for (Future<Integer> r : results) {
        total += r.get(WAIT_SECONDS * 2, TimeUnit.SECONDS);
      }
      assertEquals(threads * perThread, total);
    } finally {
      callers.shutdownNow();
      answerers.shutdownNow();
    }
  }

  /** Answers with the checksum of each request, from a pool of threads (not the loop). */
  private final class RequestHandlerOnPool implements org.hadoophpc.net.RequestHandler {
    private final ExecutorService pool;

    RequestHandlerOnPool(ExecutorService pool) {
      this.pool = pool;
    }

    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      pool.execute(() -> checksum().onRequest(conn, request, responder));
    }
  }

  /**
   * File answers made on other threads than the loop, large enough that the socket takes them
   * in pieces: each arrives whole and in order after its head, and each answerer learns once
   * (after the bytes left) that its file is free.
   */
  @Test
  void fileAnswersFromOtherThreadsArriveWholeAndFreeTheirFilesOnce() throws Exception {
    int size = 4 << 20;
    java.nio.file.Path f = patternFile(size);
    byte[] bytes = java.nio.file.Files.readAllBytes(f);
    ExecutorService answerers = Executors.newFixedThreadPool(3);
    AtomicInteger freed = new AtomicInteger();
    AtomicInteger failedFrees = new AtomicInteger();
    try (FileChannel ch = FileChannel.open(f)) {
      start(baseConf(), answeredById((conn, request, requestId) -> {
        long position = request.nio().getLong(0);
        int length = request.nio().getInt(8);
        request.release();
        answerers.execute(() -> {
          Buffer head = server.bufferPool().allocate(4);
          head.nio().putInt(0, length);
          assertTrue(conn.respondFile(requestId, head, ch, position, length,
              new Completion<Void>() {
                @Override
                public void completed(Void v) {
                  freed.incrementAndGet();
                }

                @Override
                public void failed(Throwable cause) {
                  failedFrees.incrementAndGet();
                }
              }));
        });
      }));
      Random random = new Random(7);
      List<CompletableFuture<Buffer>> answers = new ArrayList<>();
      List<int[]> asked = new ArrayList<>();
      for (int i = 0; i < 24; i++) {
        int length = i % 3 == 0 ? (3 << 20) + random.nextInt(1 << 20) : random.nextInt(100_000);
        int position = random.nextInt(size - length + 1);
        asked.add(new int[] {position, length});
        answers.add(connection.request(fileRequest(position, length)));
      }
      for (int i = 0; i < answers.size(); i++) {
        Buffer answer = answers.get(i).get(WAIT_SECONDS, TimeUnit.SECONDS);
        try {
          ByteBuffer a = answer.nio();
          int position = asked.get(i)[0];
          int length = asked.get(i)[1];
          assertEquals(4 + length, a.remaining());
          assertEquals(length, a.getInt());
          assertEquals(ByteBuffer.wrap(bytes, position, length), a, "answer " + i);
        } finally {
          answer.release();
        }
      }
      waitFor(() -> freed.get() == answers.size(), "every file answer to free its file");
      assertEquals(0, failedFrees.get());
    } finally {
      answerers.shutdownNow();
    }
  }

  // ------------------------------------------------- reads left to callers (TcpCallerReads)

  /** Sends one echo request whose completion records the thread that ran it. */
  private CompletableFuture<Thread> echoRequest(int size, long seed) {
    CompletableFuture<Thread> ranOn = new CompletableFuture<>();
    assertTrue(connection.request(filled(client.bufferPool(), size, seed), new Completion<>() {
      @Override
      public void completed(Buffer answer) {
        boolean same = answer.readableBytes() == size;
        answer.release();
        if (same) {
          ranOn.complete(Thread.currentThread());
        } else {
          ranOn.completeExceptionally(new AssertionError("answer of " + size + " bytes expected"));
        }
      }

      @Override
      public void failed(Throwable cause) {
        ranOn.completeExceptionally(cause);
      }
    }));
    return ranOn;
  }

  /**
   * Once reads are left to callers, a caller waiting on the connection reads the answer itself:
   * its completion runs on that thread, not on the transport's.
   */
  @Test
  void aCallerReadingTheConnectionRunsTheCompletionsItReads() throws Exception {
    start(baseConf(), echo());
    assertTrue(connection.leaveReadsToCallers());
    assertTrue(connection.leaveReadsToCallers(), "asking twice changes nothing");
    for (int i = 0; i < 50; i++) {
      CompletableFuture<Thread> ranOn = echoRequest(1 + 9000 * i, i);
      while (!ranOn.isDone()) {
        assertTrue(connection.readOnCaller(TimeUnit.SECONDS.toNanos(1)));
      }
      assertEquals(Thread.currentThread(), ranOn.get(), "request " + i);
    }
  }

  /**
   * A caller's read hands it at most one large answer (so it copies that out while it is in its
   * cache), however many are waiting in the socket; all of them arrive whole.
   */
  @Test
  void aCallerReadEndsAfterOneLargeAnswer() throws Exception {
    start(baseConf(), echo());
    assertTrue(connection.leaveReadsToCallers());
    List<CompletableFuture<Thread>> answers = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      answers.add(echoRequest(48 * 1024, i));
    }
    Thread me = Thread.currentThread();
    int mine = 0;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS * 4);
    while (!answers.stream().allMatch(CompletableFuture::isDone)) {
      assertTrue(System.nanoTime() < deadline, "answers still missing after the wait");
      assertTrue(connection.readOnCaller(TimeUnit.SECONDS.toNanos(WAIT_SECONDS)));
      // (the loop's sweep may read one in between, when no caller reads: not counted here)
      int now = (int) answers.stream().filter(a -> a.isDone() && a.join() == me).count();
      assertTrue(now - mine <= 1, "one read completed " + (now - mine) + " large answers");
      mine = now;
    }
    for (CompletableFuture<Thread> a : answers) {
      a.get(); // each arrived whole
    }
  }

  /**
   * With nobody reading, answers still arrive (the loop's sweep reads the connection): a caller
   * that never reads is slower, never stuck.
   */
  @Test
  void answersArriveWhenNoCallerReads() throws Exception {
    start(baseConf(), echo());
    assertTrue(connection.leaveReadsToCallers());
    for (int i = 0; i < 5; i++) {
      Thread ranOn = echoRequest(100, i).get(WAIT_SECONDS, TimeUnit.SECONDS);
      assertTrue(ranOn.getName().startsWith("hpc-tcp-"), "read by the loop: " + ranOn);
    }
  }

  /**
   * One caller reads at a time: a second one is told at once to wait the usual way; a wake-up
   * ends the first one's wait early; a connection that does not leave reads to callers refuses.
   */
  @Test
  void oneCallerReadsAtATimeAndAWakeUpEndsItsWait() throws Exception {
    start(baseConf(), new Holding());
    assertFalse(connection.readOnCaller(1), "reads not left to callers yet");
    assertTrue(connection.leaveReadsToCallers());
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      CountDownLatch inside = new CountDownLatch(1);
      Future<Boolean> first = other.submit(() -> {
        inside.countDown();
        while (!connection.readOnCaller(TimeUnit.SECONDS.toNanos(WAIT_SECONDS * 4))) {
          if (Thread.currentThread().isInterrupted()) {
            return false;
          }
          Thread.onSpinWait(); // the main thread held the reader's place for a moment
        }
        return true;
      });
      inside.await();
      waitFor(() -> !connection.readOnCaller(0), "the other thread to be reading");
      connection.wakeReader();
      assertTrue(first.get(WAIT_SECONDS, TimeUnit.SECONDS), "woken before its timeout");
    } finally {
      other.shutdownNow();
    }
  }

  /**
   * Closing a connection a caller is reading ends that caller's wait, and the socket is released
   * (the peer sees the connection end).
   */
  @Test
  void closingEndsACallersWaitAndReleasesTheSocket() throws Exception {
    java.util.concurrent.atomic.AtomicReference<Connection> accepted =
        new java.util.concurrent.atomic.AtomicReference<>();
    CountDownLatch peerClosed = new CountDownLatch(1);
    start(baseConf(), new org.hadoophpc.net.RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        accepted.set(conn);
        request.release();
        responder.respond(server.bufferPool().allocate(0));
      }

      @Override
      public void onClose(Connection conn) {
        peerClosed.countDown();
      }
    });
    assertTrue(connection.leaveReadsToCallers());
    CompletableFuture<Thread> hello = echoRequest(0, 0);
    while (!hello.isDone()) {
      connection.readOnCaller(TimeUnit.SECONDS.toNanos(1));
    }
    ExecutorService other = Executors.newSingleThreadExecutor();
    try {
      long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
      Future<Boolean> reading = other.submit(() -> {
        // the main thread's polls below take the reader's place for a moment: try again
        while (!connection.readOnCaller(TimeUnit.SECONDS.toNanos(WAIT_SECONDS * 4))) {
          if (System.nanoTime() - giveUp > 0) {
            return false;
          }
          Thread.onSpinWait();
        }
        return true;
      });
      waitFor(() -> !connection.readOnCaller(0), "the other thread to be reading");
      connection.close();
      assertTrue(reading.get(WAIT_SECONDS, TimeUnit.SECONDS));
      assertTrue(peerClosed.await(WAIT_SECONDS, TimeUnit.SECONDS), "the server saw the close");
      assertFalse(connection.readOnCaller(0), "nothing to read on a closed connection");
    } finally {
      other.shutdownNow();
    }
  }

  /**
   * Connects made on callers' threads leave their bookkeeping to the loop without waking it; a
   * burst of them (more than the loop's task queue holds) within one sweep period must still
   * connect: before, the 1025th failed with "event loop is overloaded".
   */
  @Test
  void aBurstOfConnectsOnCallersThreadsAllConnect() throws Exception {
    start(baseConf(), new Holding());
    for (int i = 0; i < 3000; i++) {
      Connection c = client.connect(listener.address(), 10_000);
      c.close();
    }
    assertEquals(0, client.metrics().connectFailures());
  }

  /** An interrupt ends a caller's wait and stays set for the caller to see. */
  @Test
  void anInterruptEndsACallersWaitAndIsKept() throws Exception {
    start(baseConf(), new Holding());
    assertTrue(connection.leaveReadsToCallers());
    Thread.currentThread().interrupt();
    try {
      assertTrue(connection.readOnCaller(TimeUnit.SECONDS.toNanos(WAIT_SECONDS * 4)));
      assertTrue(Thread.currentThread().isInterrupted());
    } finally {
      Thread.interrupted();
    }
  }

  /** Holds every request unanswered (releasing its buffer). */
  private static final class Holding implements org.hadoophpc.net.RequestHandler {
    @Override
    public void onRequest(Connection conn, Buffer request, Responder responder) {
      request.release();
    }
  }
}
