/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ProtocolException;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;

/**
 * Something that is not the NodeManager's hpc shuffle holding one of its ports (a co-tenant):
 * it answers opens as {@link #answer} says, closes with nothing, and counts the opens.
 */
final class FakeShuffleService implements AutoCloseable {
  /** How the fake answers one open: an answer to send, or null to relay or fail itself. */
  interface Answer {
    OpenResponse answer(OpenRequest request, Buffer raw, RequestHandler.Responder responder)
        throws IOException;
  }

  private final Transport transport;
  private final Listener listener;
  final AtomicInteger opens = new AtomicInteger();

  FakeShuffleService(int port, Answer answer) throws IOException {
    Configuration conf = new Configuration(false);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    transport = TransportFactory.create(conf);
    listener = transport.listen(new InetSocketAddress("127.0.0.1", port), new RequestHandler() {
      @Override
      public void onRequest(Connection connection, Buffer request, Responder responder) {
        try {
          ByteBuffer in = request.nio().duplicate();
          byte type = Wire.type(in);
          if (type != Wire.TYPE_OPEN) {
            respond(responder, null);
            return;
          }
          opens.incrementAndGet();
          OpenResponse r = answer.answer(OpenRequest.decode(in), request, responder);
          if (r != null) {
            respond(responder, r);
          }
        } catch (IOException e) {
          responder.fail(ShuffleError.BAD_REQUEST.code(), e.getMessage());
        } finally {
          request.release();
        }
      }
    });
  }

  private void respond(RequestHandler.Responder responder, OpenResponse r)
      throws ProtocolException {
    Buffer b = transport.bufferPool().allocate(r == null ? 1 : r.encodedSize());
    if (r != null) {
      r.encode(b.nio());
    }
    b.nio().flip();
    responder.respond(b);
  }

  int port() {
    return listener.address().getPort();
  }

  Transport transport() {
    return transport;
  }

  @Override
  public void close() throws Exception {
    listener.close();
    transport.close();
  }
}
