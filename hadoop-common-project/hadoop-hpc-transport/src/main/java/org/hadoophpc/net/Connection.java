/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.channels.FileChannel;
import java.util.List;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * One reliable, ordered connection between two transports.
 *
 * <p>Every operation comes in two forms: with a {@link Completion} the caller supplies (the
 * transport then keeps no object of its own per operation: no garbage per message in steady
 * state), and returning a {@link CompletableFuture} (one object per operation; built on the
 * first form).
 *
 * <p>Data-plane calls never block and never throw for back-pressure: when
 * {@code hadoop.hpc.transport.max.inflight} operations are outstanding they return
 * {@code false} (callback form) or {@code null} (future form), the completion is not called, and
 * the caller keeps ownership of its buffer; retry after an earlier operation completes.
 * Operations complete on the transport's event thread; they fail with
 * {@link ConnectionClosedException} when the connection closes or the peer dies, and with
 * {@link TransportTimeoutException} after {@code hadoop.hpc.transport.io.timeout}. On a
 * connection that is already closed a call returns {@code true} and fails its completion at
 * once, on the calling thread.
 *
 * <p>Thread-safe.
 */
public interface Connection extends AutoCloseable {

  InetSocketAddress remoteAddress();

  boolean isOpen();

  /** Operations started and not yet completed. */
  int inFlight();

  /**
   * Sends {@code request} (its bytes between position and limit; ownership passes to the
   * transport unless this returns false) and completes with the peer's response, which the
   * completion then owns and must release. A handler failure on the peer fails the operation
   * with a {@link TransportException} carrying its message.
   *
   * @return false under back-pressure (nothing happened; {@code request} is still the caller's)
   * @throws IllegalArgumentException when the request exceeds
   *         {@code hadoop.hpc.transport.max.message.size} (the buffer stays the caller's)
   */
  boolean request(Buffer request, Completion<Buffer> completion);

  /**
   * Sends the first {@code count} of {@code requests} as {@link #request(Buffer, Completion)}
   * would, each answered once through {@code completion}, together where the transport can
   * (tcp: one gathering write when the connection is idle).
   *
   * @return how many were taken, from the first on; the others (back-pressure) are still the
   *         caller's
   * @throws IllegalArgumentException when one exceeds
   *         {@code hadoop.hpc.transport.max.message.size} (the ones from it on are still the
   *         caller's)
   */
  default int request(Buffer[] requests, int count, Completion<Buffer> completion) {
    for (int i = 0; i < count; i++) {
      if (!request(requests[i], completion)) {
        return i;
      }
    }
    return count;
  }

  /**
   * Sends the first {@code count} of {@code requests} as {@link #request(Buffer, Completion)}
   * would, {@code requests[i]} answered through {@code completions[i]}, together where the
   * transport can (tcp: one gathering write when the connection is idle): requests of different
   * kinds that go at the same moment, such as a stream's data with its receive places.
   *
   * @return how many were taken, from the first on; the others (back-pressure) are still the
   *         caller's
   * @throws IllegalArgumentException as {@link #request(Buffer[], int, Completion)}
   */
  default int request(Buffer[] requests, Completion<Buffer>[] completions, int count) {
    for (int i = 0; i < count; i++) {
      if (!request(requests[i], completions[i])) {
        return i;
      }
    }
    return count;
  }

  /**
   * Reads {@code length} bytes at {@code offset} of the peer's {@code region} into
   * {@code destination} at its position (which advances). {@code destination} stays owned by
   * the caller and must not be released before the completion is called.
   *
   * @return false under back-pressure
   */
  boolean read(RemoteRegion region, long offset, int length, Buffer destination,
      Completion<Void> completion);

  /**
   * Writes {@code source}'s bytes between position and limit (the position is not changed) to
   * the peer's {@code region} at {@code offset}. {@code source} stays owned by the caller, who
   * must not change or release it before the completion is called.
   *
   * @return false under back-pressure
   */
  boolean write(Buffer source, RemoteRegion region, long offset, Completion<Void> completion);

  /**
   * {@link #request(Buffer, Completion)} as a future; {@code null} under back-pressure.
   */
  default CompletableFuture<Buffer> request(Buffer request) {
    FutureCompletion<Buffer> f = new FutureCompletion<>();
    return request(request, f) ? f : null;
  }

  /**
   * {@link #read(RemoteRegion, long, int, Buffer, Completion)} as a future; {@code null} under
   * back-pressure.
   */
  default CompletableFuture<Void> read(RemoteRegion region, long offset, int length,
      Buffer destination) {
    FutureCompletion<Void> f = new FutureCompletion<>();
    return read(region, offset, length, destination, f) ? f : null;
  }

  /**
   * {@link #write(Buffer, RemoteRegion, long, Completion)} as a future; {@code null} under
   * back-pressure.
   */
  default CompletableFuture<Void> write(Buffer source, RemoteRegion region, long offset) {
    FutureCompletion<Void> f = new FutureCompletion<>();
    return write(source, region, offset, f) ? f : null;
  }

  /**
   * Answers the request that arrived on this connection as {@code requestId} (see
   * {@link RequestHandler#onRequest(Connection, Buffer, long)}); from any thread. Ownership of
   * {@code response} passes to the transport. If the connection has closed meanwhile the
   * response is released and nothing is sent (the requester has already failed).
   *
   * @throws IllegalStateException when that request was already answered, or {@code requestId}
   *         is not a request of this connection waiting for its answer (for instance the id of
   *         an older request, answered before): nothing is sent and {@code response} stays the
   *         caller's
   * @throws IllegalArgumentException when the response exceeds
   *         {@code hadoop.hpc.transport.max.message.size}
   */
  void respond(long requestId, Buffer response);

  /**
   * Answers the first {@code count} of {@code requestIds} with the matching {@code responses},
   * as {@link #respond(long, Buffer)} would, together where the transport can (tcp: one
   * gathering write when the connection is idle). A request that cannot be answered (answered
   * before, or not one of this connection's) has its response released and is skipped.
   *
   * @throws IllegalArgumentException when a response exceeds
   *         {@code hadoop.hpc.transport.max.message.size} (it and the ones after it are still
   *         the caller's)
   */
  default void respond(long[] requestIds, Buffer[] responses, int count) {
    for (int i = 0; i < count; i++) {
      try {
        respond(requestIds[i], responses[i]);
      } catch (IllegalStateException e) {
        responses[i].release();
      }
    }
  }

  /**
   * Fails the request {@code requestId} on the peer with {@code code} and {@code message}: the
   * requester's operation fails with a {@link RemoteFailureException} carrying both (the code as
   * a number on the wire, never parsed from text); otherwise as {@link #respond(long, Buffer)}.
   *
   * @param code what the protocol on top means by it, {@code >= 0};
   *             {@link RemoteFailureException#NO_CODE} for none
   * @throws IllegalArgumentException when {@code code} is negative
   */
  void fail(long requestId, int code, String message);

  /** {@link #fail(long, int, String)} without a code. */
  default void fail(long requestId, String message) {
    fail(requestId, RemoteFailureException.NO_CODE, message);
  }

  /**
   * Answers {@code requestId} with {@code length} bytes of {@code file} from {@code position},
   * sent straight from the file where the transport can (tcp: {@code sendfile}, no copy through
   * user memory; the peer receives an ordinary response). Returns false, having done nothing,
   * when this transport cannot: answer with {@link #respond(long, Buffer)} then. {@code file}
   * must stay open until the answer is sent; a file shorter than promised, or one closed
   * before, breaks the connection (the peer's operations fail). The default returns false.
   *
   * @throws IllegalStateException as {@link #respond(long, Buffer)}
   * @throws IllegalArgumentException when {@code length} exceeds
   *         {@code hadoop.hpc.transport.max.message.size}
   */
  default boolean respondFile(long requestId, FileChannel file, long position, int length) {
    return false;
  }

  /**
   * {@link #respondFile(long, FileChannel, long, int)} with {@code head}'s bytes (position to
   * limit; ownership passes to the transport unless this returns false) sent before the file's
   * in the same answer, and {@code done} told when the transport no longer needs {@code file}:
   * completed once its bytes went out, failed when the answer will not go out (the connection
   * closed). Until then the caller must keep {@code file} open. {@code done} runs on the
   * transport's event thread, or on the calling thread when the connection is already closed.
   * The default returns false, having done nothing ({@code head} stays the caller's).
   *
   * @throws IllegalStateException as {@link #respond(long, Buffer)}
   * @throws IllegalArgumentException when head and file together exceed
   *         {@code hadoop.hpc.transport.max.message.size}
   */
  default boolean respondFile(long requestId, Buffer head, FileChannel file, long position,
      int length, Completion<Void> done) {
    return false;
  }

  /**
   * {@link #respondFile(long, FileChannel, long, int)} with the bytes of several file spans, one
   * after the other, as one answer (the peer receives an ordinary response): one message for
   * pieces of several files. Returns false, having done nothing, when this transport cannot. The
   * files must stay open until the answer is sent. The default returns false.
   *
   * @throws IllegalStateException as {@link #respond(long, Buffer)}
   * @throws IllegalArgumentException when the spans together exceed
   *         {@code hadoop.hpc.transport.max.message.size}
   */
  default boolean respondFiles(long requestId, List<FileSpan> spans) {
    return false;
  }

  /** True when {@link #respondFile} sends from files itself on this connection. */
  default boolean respondsFromFiles() {
    return false;
  }

  /**
   * Most a peer may send in one frame before {@link #trust()}: enough for any request a handler
   * authenticates with (a shuffle open names at most 4096 map attempts), far below
   * {@code max.message.size}, so connections that never authenticate pin little memory.
   */
  int UNTRUSTED_MAX_MESSAGE_BYTES = 256 * 1024;

  /**
   * Marks the peer authenticated. On an accepted connection whose handler
   * {@link RequestHandler#authenticates()}, until this is called the peer may have one request
   * unanswered, of at most {@link #UNTRUSTED_MAX_MESSAGE_BYTES}, and no one-sided operation; a
   * peer that sends more, or does not authenticate within {@code hadoop.hpc.transport.io.timeout},
   * is disconnected. Other connections are trusted from the start. Any thread; idempotent.
   */
  default void trust() {
  }

  /** False while the peer of an authenticating handler has not authenticated. */
  default boolean trusted() {
    return true;
  }

  /**
   * Leaves the reading of this connection to the threads that wait on it: from now on the
   * transport's own thread reads it only while nobody does, in its periodic sweep (at most 100 ms
   * apart), and a thread that needs what the peer sends calls {@link #readOnCaller(long)}, which
   * reads and dispatches on that thread. A message then costs one wake-up (of the waiting thread)
   * instead of two (the transport's thread, then the waiting one). Completions run on whichever
   * thread reads: use it only where completions never wait. Returns false, having changed
   * nothing, when the transport does not do this (the default) or the connection is closed.
   */
  default boolean leaveReadsToCallers() {
    return false;
  }

  /**
   * On a connection that {@link #leaveReadsToCallers() leaves reads to callers}: reads and
   * dispatches, on the calling thread, what the peer sent, waiting up to {@code timeoutNanos} for
   * it. The caller must hold no lock a completion takes. Returns true when this thread read (or
   * waited to); false at once when another thread is reading now (its completions will wake the
   * caller the usual way), or the connection does not leave reads to callers (the default). Ends
   * early on {@link #wakeReader()} and on an interrupt (whose status is kept).
   */
  default boolean readOnCaller(long timeoutNanos) {
    return false;
  }

  /** Makes a thread inside {@link #readOnCaller(long)} return soon; any thread. */
  default void wakeReader() {
  }

  /**
   * Closes the connection; pending operations fail with {@link ConnectionClosedException}. On a
   * connection that {@link #leaveReadsToCallers() leaves reads to callers} the closing thread
   * may do this itself, running those completions as a reading caller would.
   */
  @Override
  void close();
}
