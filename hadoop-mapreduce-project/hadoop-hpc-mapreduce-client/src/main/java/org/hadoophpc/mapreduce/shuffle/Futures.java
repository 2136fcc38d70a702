/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteFailureException;

/** Waiting on transport futures from a fetcher thread, with failures as IOExceptions. */
final class Futures {
  private Futures() {
  }

  /**
   * Waits for {@code f}. The transport fails every operation after its io timeout; {@code
   * timeoutMs} is a second bound in case it does not. A failure carrying a service error code
   * becomes a {@link ShuffleServiceException}.
   */
  static <T> T await(CompletableFuture<T> f, long timeoutMs, String what) throws IOException {
    try {
      return f.get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      release(f);
      throw new InterruptedIOException("interrupted while waiting for " + what);
    } catch (TimeoutException e) {
      release(f);
      throw new IOException("no answer to " + what + " within " + timeoutMs + " ms");
    } catch (ExecutionException e) {
      Throwable c = e.getCause();
      ShuffleError code = c instanceof RemoteFailureException r ? ShuffleError.of(r.code()) : null;
      if (code != null) {
        throw new ShuffleServiceException(code, c.getMessage(), c);
      }
      if (c instanceof IOException io) {
        throw new IOException(what + " failed: " + io.getMessage(), io);
      }
      throw new IOException(what + " failed: " + c, c);
    }
  }

  /**
   * {@link #await(CompletableFuture, long, String)}, reading {@code reads} on this thread while
   * waiting when it is not null (a connection that {@link Connection#leaveReadsToCallers()
   * leaves reads to callers}). While another thread reads it, this one waits for its completion
   * in slices of {@link #SLICE_NANOS} and then reads itself if still unanswered (the other may
   * have left before this answer came).
   */
  static <T> T await(Connection reads, CompletableFuture<T> f, long timeoutMs, String what)
      throws IOException {
    if (reads != null) {
      long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
      long left;
      while (!f.isDone() && (left = deadline - System.nanoTime()) > 0
          && !Thread.currentThread().isInterrupted()) {
        if (!reads.readOnCaller(Math.min(left, SLICE_NANOS))) {
          try {
            f.get(Math.min(left, SLICE_NANOS), TimeUnit.NANOSECONDS);
          } catch (TimeoutException | ExecutionException e) {
            // not yet, or failed: the loop ends or await below reports it
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        }
      }
      if (!f.isDone() && !Thread.currentThread().isInterrupted()) {
        release(f);
        throw new IOException("no answer to " + what + " within " + timeoutMs + " ms");
      }
    }
    return await(f, timeoutMs, what);
  }

  /** How long a waiter leaves the reading to another thread before it looks again. */
  static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  /** Releases the buffer {@code f} completes with, whenever that happens. */
  static void release(CompletableFuture<?> f) {
    f.whenComplete((v, e) -> {
      if (v instanceof Buffer b) {
        b.release();
      }
    });
  }
}
