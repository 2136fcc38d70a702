/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
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
}
