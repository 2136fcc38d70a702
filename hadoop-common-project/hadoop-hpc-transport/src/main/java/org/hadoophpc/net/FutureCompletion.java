/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.concurrent.CompletableFuture;

/**
 * The bridge behind {@link Connection}'s future methods: a future that is its own
 * {@link Completion}, so a future-style operation costs one object, as before callbacks
 * existed. Thread-safe (a {@link CompletableFuture}).
 */
final class FutureCompletion<T> extends CompletableFuture<T> implements Completion<T> {

  @Override
  public void completed(T result) {
    complete(result);
  }

  @Override
  public void failed(Throwable cause) {
    completeExceptionally(cause);
  }
}
