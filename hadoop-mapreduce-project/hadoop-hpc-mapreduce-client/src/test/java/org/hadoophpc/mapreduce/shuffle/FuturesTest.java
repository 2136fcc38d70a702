/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteRegion;
import org.junit.jupiter.api.Test;

/**
 * A fetcher waiting for an answer on a connection that leaves reads to callers
 * ({@link Futures#await(Connection, CompletableFuture, long, String)}): it reads on its own
 * thread, waits while another thread reads, and never waits past its timeout.
 */
class FuturesTest {
  /** A connection whose {@code readOnCaller} runs {@code read} (true: this thread read). */
  private static final class Reads implements Connection {
    private final BooleanSupplier read;
    final AtomicInteger calls = new AtomicInteger();

    Reads(BooleanSupplier read) {
      this.read = read;
    }

    @Override
    public boolean readOnCaller(long timeoutNanos) {
      calls.incrementAndGet();
      return read.getAsBoolean();
    }

    @Override
    public InetSocketAddress remoteAddress() {
      return new InetSocketAddress("127.0.0.1", 1);
    }

    @Override
    public boolean isOpen() {
      return true;
    }

    @Override
    public int inFlight() {
      return 0;
    }

    @Override
    public boolean request(Buffer request, Completion<Buffer> completion) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean read(RemoteRegion region, long offset, int length, Buffer destination,
        Completion<Void> completion) {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean write(Buffer source, RemoteRegion region, long offset,
        Completion<Void> completion) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void respond(long requestId, Buffer response) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void fail(long requestId, int code, String message) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void close() {
    }
  }

  @Test
  void theWaitingThreadReadsAndCompletesItsOwnAnswer() throws Exception {
    CompletableFuture<String> f = new CompletableFuture<>();
    Thread[] completer = new Thread[1];
    Reads c = new Reads(() -> {
      completer[0] = Thread.currentThread();
      f.complete("answer"); // the read dispatched the answer on this thread
      return true;
    });
    assertEquals("answer", Futures.await(c, f, 20_000, "a read"));
    assertSame(Thread.currentThread(), completer[0]);
    assertEquals(1, c.calls.get());
  }

  @Test
  void whileAnotherThreadReadsItWaitsForThatThreadsCompletion() throws Exception {
    CompletableFuture<String> f = new CompletableFuture<>();
    Reads c = new Reads(() -> false); // someone else reads now
    Thread other = new Thread(() -> f.complete("read by the other"));
    other.start();
    assertEquals("read by the other", Futures.await(c, f, 20_000, "a read"));
    other.join();
  }

  @Test
  void noAnswerFailsAtItsTimeoutInsteadOfWaitingOn() {
    CompletableFuture<String> f = new CompletableFuture<>();
    Reads c = new Reads(() -> {
      try {
        Thread.sleep(5); // a read slice in which nothing arrived
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return true;
    });
    IOException e = assertThrows(IOException.class, () -> Futures.await(c, f, 100, "a read"));
    assertTrue(e.getMessage().contains("no answer to a read within 100 ms"), e.getMessage());
  }

  @Test
  void aFailedAnswerIsReportedAsTheShuffleFailure() {
    CompletableFuture<String> f = new CompletableFuture<>();
    Reads c = new Reads(() -> f.completeExceptionally(new IOException("connection reset")));
    IOException e = assertThrows(IOException.class, () -> Futures.await(c, f, 20_000, "a read"));
    assertTrue(e.getMessage().contains("a read failed: connection reset"), e.getMessage());
  }

  @Test
  void anInterruptEndsTheWaitAndIsKept() {
    CompletableFuture<String> f = new CompletableFuture<>();
    Reads c = new Reads(() -> {
      Thread.currentThread().interrupt(); // readOnCaller ends early on an interrupt
      return true;
    });
    try {
      assertThrows(InterruptedIOException.class, () -> Futures.await(c, f, 20_000, "a read"));
      assertTrue(Thread.currentThread().isInterrupted());
    } finally {
      Thread.interrupted();
    }
    assertEquals(1, c.calls.get());
  }
}
