/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.nio.channels.FileChannel;
import java.util.List;

/**
 * A {@link RequestHandler.Responder} for one request id: the connection checks the id's
 * generation, so a second answer through this object, or one arriving after the transport
 * reused the request's state for a newer request, throws instead of answering that newer one.
 * Immutable; thread-safe.
 */
final class BoundResponder implements RequestHandler.Responder {
  private final Connection connection;
  private final long requestId;

  BoundResponder(Connection connection, long requestId) {
    this.connection = connection;
    this.requestId = requestId;
  }

  @Override
  public void respond(Buffer response) {
    connection.respond(requestId, response);
  }

  @Override
  public void fail(int code, String message) {
    connection.fail(requestId, code, message);
  }

  @Override
  public boolean respondFile(FileChannel file, long position, int length) {
    return connection.respondFile(requestId, file, position, length);
  }

  @Override
  public boolean respondFiles(List<FileSpan> spans) {
    return connection.respondFiles(requestId, spans);
  }

  @Override
  public String toString() {
    return "Responder[request " + requestId + " on " + connection + "]";
  }
}
