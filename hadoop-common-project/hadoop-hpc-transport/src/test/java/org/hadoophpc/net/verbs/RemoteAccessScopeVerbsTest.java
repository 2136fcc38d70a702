/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.hadoophpc.net.verbs.VerbsRig.await;
import static org.hadoophpc.net.verbs.VerbsRig.failure;
import static org.hadoophpc.net.verbs.VerbsRig.filled;
import static org.hadoophpc.net.verbs.VerbsRig.waitFor;
import static org.hadoophpc.net.verbs.VerbsRig.zeros;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RemoteRegion;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportConformanceTest;
import org.hadoophpc.net.TransportException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A peer reaches exactly what it was granted, and only while it is granted, enforced by the
 * HCA (rxe0 in the Soft-RoCE lane): a rendezvous key opens one transfer, on one connection, for
 * reading, until the transfer is over; an exposed region opens its own bytes until it is
 * unexposed; a pool slab's key opens nothing. (That a rendezvous window also stops at the last
 * granted byte is the HCA's job by the IB spec; rdma_rxe of Linux 6.1 checks the range of the
 * registration under the window instead, so the lane cannot show it: see test_verbs_loopback.) Each attempt outside a grant is a
 * remote access error that fails the attacker's operation and closes its connection, and the
 * attacker's destination holds nothing of the server's memory. The peer plays hostile through
 * forged {@link RemoteRegion} descriptors (they skip the local checks) and the rendezvous tap.
 */
class RemoteAccessScopeVerbsTest {
  private static final int RESPONSE = 256 << 10;
  private static final int SECRET = 64 << 10;

  private VerbsRig rig;
  private VerbsTransport server;
  private Listener listener;
  /** The server side of the latest connection, as the handler saw it. */
  private final AtomicReference<VerbsConnection> served = new AtomicReference<>();
  /** A view of the latest large response the server sent (its pool memory). */
  private final AtomicReference<ByteBuffer> sent = new AtomicReference<>();
  /** Another connection's data in the server's pool, next to the responses. */
  private Buffer secret;

  @BeforeEach
  void start() throws Exception {
    rig = VerbsRig.find();
    server = rig.open(conf("20s"));
    secret = filled(server.bufferPool(), SECRET, 99);
    listener = server.listen(rig.bindAddress(), bigResponses());
  }

  @AfterEach
  void stop() throws Exception {
    if (secret != null) {
      secret.release();
    }
    if (rig != null) {
      rig.close();
    }
  }

  private static Configuration conf(String ioTimeout) {
    return VerbsRig.smallConf(ioTimeout);
  }

  /** Answers every request with a RESPONSE-byte pattern (a rendezvous). */
  private RequestHandler bigResponses() {
    return TransportConformanceTest.answeredById((c, request, requestId) -> {
      request.release();
      served.set((VerbsConnection) c);
      Buffer response = filled(server.bufferPool(), RESPONSE, 7);
      sent.set(response.nio().duplicate());
      c.respond(requestId, response);
    });
  }

  /** A rendezvous announcement as the client saw it. */
  private record Grant(long address, int length, int rkey) {
    RemoteRegion region(long extra) {
      return new RemoteRegion(address, length + extra, rkey & 0xffff_ffffL);
    }
  }

  /** Makes the client's connection record the next announcement; {@code read}: go on. */
  private static AtomicReference<Grant> tap(VerbsConnection c, boolean read) {
    AtomicReference<Grant> grant = new AtomicReference<>();
    c.tap = (forResponse, reqId, length, rkey, address) -> {
      grant.set(new Grant(address, length, rkey));
      return read;
    };
    return grant;
  }

  private VerbsTransport client() throws Exception {
    return rig.open(conf("20s"));
  }

  private static Buffer zeroed(VerbsTransport t, int size) {
    Buffer b = t.bufferPool().allocate(size);
    for (int i = 0; i < size; i++) {
      b.nio().put(i, (byte) 0);
    }
    b.nio().clear();
    return b;
  }

  /** An RDMA READ outside the grant: the connection fails, nothing of the server arrives. */
  private static void readIsRefused(VerbsTransport t, VerbsConnection c, RemoteRegion r,
      long offset, int length) throws Exception {
    Buffer into = zeroed(t, length);
    CompletableFuture<Void> read = c.read(r, offset, length, into);
    Throwable e = failure(read);
    assertInstanceOf(ConnectionClosedException.class, e, e.toString());
    assertTrue(e.getMessage().contains("work request failed"), e.getMessage());
    assertTrue(zeros(into.nio(), length), "nothing of the server's memory arrived");
    into.release();
    waitFor(() -> !c.isOpen(), "the attacker's connection is closed");
  }

  private void serverStillServes() throws Exception {
    VerbsTransport t = client();
    VerbsConnection c = rig.connect(t, listener.address());
    Buffer response = await(c.request(filled(t.bufferPool(), 100, 1)));
    assertEquals(RESPONSE, response.readableBytes());
    Buffer expected = filled(t.bufferPool(), RESPONSE, 7);
    assertEquals(expected.nio(), response.nio(), "the pattern the handler sent");
    expected.release();
    response.release();
    c.close();
  }

  @Test
  void aRendezvousKeyOpensItsTransferOnlyOnItsConnectionAndOnlyForReading() throws Exception {
    VerbsTransport attacker = client();
    VerbsConnection c1 = rig.connect(attacker, listener.address());
    AtomicReference<Grant> grant = tap(c1, false); // holds the grant open, never reads
    CompletableFuture<Buffer> pending = c1.request(filled(attacker.bufferPool(), 100, 1));
    waitFor(() -> grant.get() != null, "the server announced its response");
    Grant g = grant.get();
    assertEquals(RESPONSE, g.length());

    // The same key through another connection (another QP): refused by the HCA.
    VerbsConnection c2 = rig.connect(attacker, listener.address());
    readIsRefused(attacker, c2, g.region(0), 0, RESPONSE);

    // The server slab's own key, for memory of another connection: refused.
    VerbsTransport.MrInfo slab = server.mr(secret);
    RemoteRegion wholeSlab = new RemoteRegion(slab.addr(), 4 << 20, slab.rkey() & 0xffff_ffffL);
    VerbsConnection c3 = rig.connect(attacker, listener.address());
    readIsRefused(attacker, c3, wholeSlab, secret.slabOffset(), SECRET);

    // An RDMA WRITE into the granted (read-only) bytes: refused, the response unchanged.
    ByteBuffer before = ByteBuffer.allocate(RESPONSE).put(sent.get().duplicate()).flip();
    Buffer junk = filled(attacker.bufferPool(), 4096, 3);
    Throwable w = failure(c1.write(junk, g.region(0), 0));
    assertInstanceOf(ConnectionClosedException.class, w, w.toString());
    junk.release();
    assertEquals(before, sent.get().duplicate().clear().limit(RESPONSE), "payload untouched");
    assertInstanceOf(ConnectionClosedException.class, failure(pending));
    serverStillServes();
  }

  @Test
  void aRendezvousKeyIsDeadOnceTheTransferIsOver() throws Exception {
    VerbsTransport attacker = client();
    VerbsConnection c1 = rig.connect(attacker, listener.address());
    AtomicReference<Grant> grant = tap(c1, true); // an honest read, then RNDV_DONE
    Buffer response = await(c1.request(filled(attacker.bufferPool(), 100, 1)));
    assertEquals(RESPONSE, response.readableBytes());
    response.release();
    VerbsConnection s = served.get();
    waitFor(() -> s.exposedWindows() == 0, "the server saw RNDV_DONE and invalidated the key");
    assertEquals(1, s.localInvalidations());
    readIsRefused(attacker, c1, grant.get().region(0), 0, RESPONSE);
    serverStillServes();
  }

  @Test
  void aGrantThePeerNeverUsesExpiresAndIsInvalidatedByTheServer() throws Exception {
    // A server with a short io timeout: the grant dies when it expires.
    VerbsTransport shortServer = rig.open(conf("2s"));
    Listener l = shortServer.listen(rig.bindAddress(), new RequestHandler() {
      @Override
      public void onRequest(Connection c, Buffer request, Responder responder) {
        request.release();
        served.set((VerbsConnection) c);
        responder.respond(filled(shortServer.bufferPool(), RESPONSE, 5));
      }
    });
    long usedBefore = shortServer.registeredMemory().usedBytes();
    VerbsTransport attacker = rig.open(conf("60s"));
    VerbsConnection c1 = rig.connect(attacker, l.address());
    AtomicReference<Grant> grant = tap(c1, false);
    CompletableFuture<Buffer> pending = c1.request(filled(attacker.bufferPool(), 100, 1));
    waitFor(() -> grant.get() != null, "the server announced its response");
    VerbsConnection s = served.get();
    waitFor(() -> s.exposedWindows() == 0, "the server invalidated the unused grant");
    assertEquals(1, s.localInvalidations());
    readIsRefused(attacker, c1, grant.get().region(0), 0, RESPONSE);
    assertInstanceOf(ConnectionClosedException.class, failure(pending));
    waitFor(() -> shortServer.registeredMemory().usedBytes() == usedBefore,
        "the server's pool memory returned");
  }

  @Test
  void anExposedRegionOpensItsBytesOnlyAndOnlyWhileExposed() throws Exception {
    Buffer region = filled(server.bufferPool(), SECRET, 11);
    RemoteRegion r = server.expose(region);
    VerbsTransport peer = client();
    VerbsConnection c1 = rig.connect(peer, listener.address());

    // Within the region: read and write work.
    Buffer into = zeroed(peer, SECRET);
    await(c1.read(r, 0, SECRET, into));
    assertEquals(region.nio().duplicate().clear().limit(SECRET), into.nio().clear()
        .limit(SECRET));
    into.release();
    Buffer data = filled(peer.bufferPool(), 4096, 12);
    await(c1.write(data, r, 100));
    assertEquals(data.nio().duplicate().clear().limit(4096),
        region.nio().duplicate().position(100).limit(4196), "the write landed in the region");
    data.release();

    // Past its end (where the pool keeps other memory): refused.
    RemoteRegion forged = new RemoteRegion(r.address(), r.length() + SECRET, r.key());
    readIsRefused(peer, c1, forged, SECRET, 4096);

    // Unexposed: a descriptor that dodges the revocation (another exposure id) is refused by
    // the HCA, because the registration is gone.
    VerbsConnection c2 = rig.connect(peer, listener.address());
    server.unexpose(r);
    Buffer later = zeroed(peer, 4096);
    Throwable e = failure(c2.read(r, 0, 4096, later));
    assertInstanceOf(TransportException.class, e);
    assertTrue(e.getMessage().contains("no longer exposes"), e.getMessage());
    later.release();
    assertTrue(c2.isOpen(), "the revoked region failed here, before posting");
    RemoteRegion dodging = new RemoteRegion(r.address(), r.length(), r.key() + (1L << 32));
    readIsRefused(peer, c2, dodging, 0, 4096);
    region.release();
    serverStillServes();
  }

  /**
   * Each side opens on its own ESTABLISHED event, so a client may read a region by RDMA while
   * the server's side of the new connection is still being set up; an unexpose then must
   * revoke there too (else the region is deregistered under the client, whose next read takes
   * a remote access error and loses its connection). Repeated: the window is short.
   */
  @Test
  void anUnexposeRightAfterAConnectIsRevokedOnTheNewConnectionToo() throws Exception {
    VerbsTransport peer = client();
    for (int i = 0; i < 20; i++) {
      Buffer region = filled(server.bufferPool(), 4096, i);
      RemoteRegion r = server.expose(region);
      VerbsConnection c = rig.connect(peer, listener.address());
      Buffer into = zeroed(peer, 4096);
      await(c.read(r, 0, 4096, into));
      server.unexpose(r);
      into.nio().clear();
      Throwable e = failure(c.read(r, 0, 4096, into));
      assertTrue(e.getMessage().contains("no longer exposes"), "round " + i + ": " + e);
      assertTrue(c.isOpen(), "round " + i + ": the revoked region failed before posting");
      into.release();
      region.release();
      c.close();
    }
  }

  /**
   * An unexpose waits for every peer to confirm the revocation, but not for one whose
   * connection ends first (its queue pair no longer serves it): it returns then, not after the
   * io timeout. The peer's loop is held, so it cannot confirm.
   */
  @Test
  void anUnexposeDoesNotWaitForAPeerWhoseConnectionEnds() throws Exception {
    VerbsTransport slowServer = rig.open(conf("120s"));
    AtomicReference<VerbsConnection> side = new AtomicReference<>();
    Listener l = slowServer.listen(rig.bindAddress(), new RequestHandler() {
      @Override
      public void onRequest(Connection c, Buffer request, Responder responder) {
        side.set((VerbsConnection) c);
        responder.respond(request);
      }
    });
    VerbsTransport peer = rig.open(conf("120s"));
    VerbsConnection c = rig.connect(peer, l.address());
    await(c.request(filled(peer.bufferPool(), 100, 1))).release();
    VerbsConnection s = side.get();
    Buffer region = filled(slowServer.bufferPool(), 4096, 3);
    RemoteRegion r = slowServer.expose(region);
    CountDownLatch hold = new CountDownLatch(1);
    try {
      assertTrue(peer.loop().submit(() -> {
        try {
          hold.await(VerbsRig.WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }));
      CompletableFuture<Void> unexposed = CompletableFuture.runAsync(
          () -> slowServer.unexpose(r));
      waitFor(() -> s.revocationsAwaited() == 1, "the server asked the peer to revoke");
      assertFalse(unexposed.isDone(), "the unexpose waits for the peer's confirmation");
      s.close();
      // within half the server's 120 s io timeout: the connection's end released the wait
      unexposed.get(60, TimeUnit.SECONDS);
      assertEquals(0, s.revocationsAwaited());
    } finally {
      hold.countDown();
    }
    region.release();
  }
}
