/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For transport implementations: calls a caller's {@link Completion} so that an exception
 * thrown there is logged and goes no further (the event loop and the connection carry on, as
 * the {@link Completion} contract says). Stateless; thread-safe.
 */
public final class Completions {
  private static final Logger LOG = LoggerFactory.getLogger(Completions.class);

  private Completions() {
  }

  /** Calls {@code completion.completed(result)}. */
  @SuppressWarnings("unchecked")
  public static void succeed(Completion<?> completion, Object result) {
    try {
      ((Completion<Object>) completion).completed(result);
    } catch (RuntimeException e) {
      LOG.warn("a transport completion threw from completed(); ignored", e);
    }
  }

  /** Calls {@code completion.failed(cause)}. */
  public static void fail(Completion<?> completion, Throwable cause) {
    try {
      completion.failed(cause);
    } catch (RuntimeException e) {
      e.addSuppressed(cause);
      LOG.warn("a transport completion threw from failed(); ignored", e);
    }
  }
}
