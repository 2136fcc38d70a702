/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
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
}
