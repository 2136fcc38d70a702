/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportConf;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The limits a handler that authenticates sets on its peers ({@link
 * RequestHandler#untrustedRequestBytes()}, {@link RequestHandler#authenticationTimeoutMs()},
 * {@link RequestHandler#maxRequestBytes()}, {@link RequestHandler#maxConnectionsPerAddress()}),
 * seen from raw sockets writing frames by hand: a small request before trust gathers in the
 * connection's read-ahead buffer, not the pool.
 */
class TcpAdmissionTest {
  private static final int UNTRUSTED = 512;
  private static final int MAX_REQUEST = 8192;

  private TcpTransport server;
  private Listener listener;
  /** The handler authenticates (else trusts every peer). */
  private boolean authenticates = true;
  private int perAddress;

  /** Trusts a peer whose first request's first byte is 1; answers every request empty. */
  private final RequestHandler handler = new RequestHandler() {
    @Override
    public void onRequest(Connection c, Buffer request, Responder responder) {
      if (request.nio().get(request.nio().position()) == 1) {
        c.trust();
      }
      request.release();
      responder.respond(server.bufferPool().allocate(0));
    }

    @Override
    public boolean authenticates() {
      return authenticates;
    }

    @Override
    public int maxConnectionsPerAddress() {
      return perAddress;
    }

    @Override
    public int untrustedRequestBytes() {
      return UNTRUSTED;
    }

    @Override
    public long authenticationTimeoutMs() {
      return 400;
    }

    @Override
    public int maxRequestBytes() {
      return MAX_REQUEST;
    }
  };

  private Socket start() throws IOException {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.hpc.transport.tcp.local.dir", ""); // loopback TCP, not a local socket
    server = new TcpTransport(TransportConf.from(conf)); // io.timeout 60 s: the handler's counts
    listener = server.listen(new InetSocketAddress("127.0.0.1", 0), handler);
    return connect();
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    s.connect(listener.address(), 5000);
    s.setSoTimeout(3000);
    return s;
  }

  @AfterEach
  void tearDown() throws IOException {
    if (server != null) {
      server.close();
    }
  }

  private static void request(OutputStream out, int length, long opId, byte first)
      throws IOException {
    ByteBuffer h = ByteBuffer.allocate(TcpFrame.HEADER_BYTES);
    TcpFrame.encode(h, TcpFrame.REQUEST, length, opId, 0, 0, 0);
    out.write(h.array());
    byte[] payload = new byte[length];
    if (length > 0) {
      payload[0] = first;
    }
    out.write(payload);
    out.flush();
  }

  /** Reads one frame's header and payload; false at end of stream or timeout. */
  private static boolean answered(InputStream in) throws IOException {
    byte[] h = new byte[TcpFrame.HEADER_BYTES];
    int got = 0;
    try {
      while (got < h.length) {
        int n = in.read(h, got, h.length - got);
        if (n < 0) {
          return false;
        }
        got += n;
      }
    } catch (SocketTimeoutException e) {
      return false;
    }
    int length = ByteBuffer.wrap(h).getInt(4);
    return in.readNBytes(length).length == length;
  }

  private static boolean closedByServer(Socket s) throws IOException {
    try {
      return s.getInputStream().read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true;
    }
  }

  @Test
  void aRequestBeyondTheHandlersUntrustedLimitCloses() throws Exception {
    try (Socket s = start()) {
      request(s.getOutputStream(), UNTRUSTED + 1, 1, (byte) 1);
      assertTrue(closedByServer(s));
    }
  }

  @Test
  void aSmallRequestTricklingInBeforeTrustTakesNoPooledMemory() throws Exception {
    try (Socket s = start()) {
      OutputStream out = s.getOutputStream();
      ByteBuffer h = ByteBuffer.allocate(TcpFrame.HEADER_BYTES);
      TcpFrame.encode(h, TcpFrame.REQUEST, UNTRUSTED, 1, 0, 0, 0);
      out.write(h.array());
      out.write(new byte[] {0, 0, 0});
      out.flush();
      Thread.sleep(150);
      assertEquals(0, server.bufferPool().usedBytes(), server.bufferPool().toString());
      out.write(new byte[UNTRUSTED - 3]); // the rest: now it is a request
      out.flush();
      assertTrue(answered(s.getInputStream()), "answered once complete");
    }
  }

  @Test
  void aPeerThatDoesNotAuthenticateWithinTheHandlersTimeoutIsClosed() throws Exception {
    try (Socket s = start()) {
      long t0 = System.nanoTime();
      assertTrue(closedByServer(s));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      assertTrue(ms < 2500, "closed after " + ms + " ms (the handler's 400 ms, not io.timeout)");
    }
  }

  @Test
  void onceTrustedRequestsAreBoundedByTheHandlersMaximum() throws Exception {
    try (Socket s = start()) {
      request(s.getOutputStream(), 4, 1, (byte) 1); // authenticates
      assertTrue(answered(s.getInputStream()));
      request(s.getOutputStream(), MAX_REQUEST, 2, (byte) 0);
      assertTrue(answered(s.getInputStream()), "a request of the maximum is served");
      s.setSoTimeout(1000);
      assertFalse(closedByServer(s), "trusted: the authentication deadline no longer applies");
      ByteBuffer h = ByteBuffer.allocate(TcpFrame.HEADER_BYTES);
      TcpFrame.encode(h, TcpFrame.REQUEST, MAX_REQUEST + 1, 3, 0, 0, 0);
      s.getOutputStream().write(h.array()); // the header alone: refused before any memory
      s.getOutputStream().flush();
      s.setSoTimeout(3000);
      assertTrue(closedByServer(s));
      assertEquals(0, server.bufferPool().usedBytes());
    }
  }

  @Test
  void connectionsFromOneAddressBeyondTheHandlersMaximumAreClosed() throws Exception {
    authenticates = false;
    perAddress = 2;
    try (Socket a = start(); Socket b = connect()) {
      request(a.getOutputStream(), 4, 1, (byte) 0);
      assertTrue(answered(a.getInputStream()));
      request(b.getOutputStream(), 4, 1, (byte) 0);
      assertTrue(answered(b.getInputStream()));
      try (Socket c = connect()) {
        assertTrue(closedByServer(c), "a third connection from the same address");
      }
      a.close();
      Thread.sleep(200); // the server sees a's end
      try (Socket d = connect()) {
        request(d.getOutputStream(), 4, 1, (byte) 0);
        assertTrue(answered(d.getInputStream()), "a place freed by a closed connection");
      }
    }
  }
}
