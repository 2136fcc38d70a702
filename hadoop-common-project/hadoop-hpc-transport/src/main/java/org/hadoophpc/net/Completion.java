/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * Receives the outcome of one {@link Connection} operation: the allocation-free alternative to
 * the {@link java.util.concurrent.CompletableFuture} forms. The transport keeps no object of its
 * own per operation for it, so a caller that reuses its completions (one per slot of its window,
 * say) produces no garbage per message.
 *
 * <p>Exactly one of the two methods is called, once, on a transport event thread; or on the
 * calling thread when the operation fails before it starts (connection already closed, bounds
 * checked locally). Like every transport callback it must not block. An exception thrown from
 * here is logged and otherwise ignored: it neither fails the connection nor reaches the caller.
 *
 * <p>Two abstract methods on purpose: implementations are small classes the caller keeps, not
 * lambdas captured anew for each call.
 *
 * @param <T> the result: the response {@link Buffer} (which the callee then owns and must
 *            release) for requests, {@code Void} (always {@code null}) for one-sided operations
 */
public interface Completion<T> {

  /** The operation succeeded with {@code result}. */
  void completed(T result);

  /**
   * The operation failed: {@link ConnectionClosedException} (closed, peer died),
   * {@link TransportTimeoutException} ({@code hadoop.hpc.transport.io.timeout}), or another
   * {@link TransportException} (the peer's handler failed, a bad region).
   */
  void failed(Throwable cause);
}
