/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.hadoophpc.net.verbs.VerbsRig.await;
import static org.hadoophpc.net.verbs.VerbsRig.filled;
import static org.hadoophpc.net.verbs.VerbsRig.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Malformed or hostile verbs messages to a live server (rxe0 in the Soft-RoCE lane): each is
 * refused by closing the sender's connection, before the server allocates anything for it; the
 * connection's pool memory returns ({@code registeredMemory().usedBytes()} back to where it was)
 * and another client connected all along keeps being served.
 */
class HostilePeerVerbsTest {
  private static final int MAX_MESSAGE = 1 << 20;

  private VerbsRig rig;
  private VerbsTransport server;
  private Listener listener;
  private VerbsTransport clients;
  private VerbsConnection bystander;
  /** The server's side of the bystander's connection (the first one served). */
  private final java.util.concurrent.atomic.AtomicReference<VerbsConnection> bystanderServed =
      new java.util.concurrent.atomic.AtomicReference<>();

  @BeforeEach
  void start() throws Exception {
    rig = VerbsRig.find();
    Configuration c = VerbsRig.smallConf("20s"); // max.message.size = MAX_MESSAGE
    server = rig.open(c);
    listener = server.listen(rig.bindAddress(), new RequestHandler() {
      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        bystanderServed.compareAndSet(null, (VerbsConnection) conn);
        responder.respond(request); // echo
      }
    });
    clients = rig.open(c);
    bystander = rig.connect(clients, listener.address());
    assertServes(bystander);
  }

  @AfterEach
  void stop() throws Exception {
    if (rig != null) {
      rig.close();
    }
  }

  private void assertServes(VerbsConnection c) throws Exception {
    for (int size : new int[] {100, 100_000}) { // eager and rendezvous
      Buffer response = await(c.request(filled(clients.bufferPool(), size, size)));
      Buffer expected = filled(clients.bufferPool(), size, size);
      assertEquals(expected.nio(), response.nio(), "echo of " + size + " bytes");
      expected.release();
      response.release();
    }
  }

  /**
   * Connects a hostile client, lets it send what {@code attack} sends, and checks the server
   * closed it, got its memory back, and still serves the bystander.
   */
  private void refused(String what, java.util.function.Consumer<VerbsConnection> attack)
      throws Exception {
    waitFor(() -> bystanderServed.get().exposedWindows() == 0,
        "the bystander's last rendezvous is over");
    long usedBefore = server.registeredMemory().usedBytes();
    VerbsConnection hostile = rig.connect(clients, listener.address());
    assertTrue(server.registeredMemory().usedBytes() > usedBefore, "the server holds a ring");
    attack.accept(hostile);
    waitFor(() -> !hostile.isOpen(), "the server closed the connection after " + what);
    waitFor(() -> server.registeredMemory().usedBytes() == usedBefore,
        "the server's pool memory returned after " + what);
    assertTrue(bystander.isOpen(), "the other connection is untouched by " + what);
    assertServes(bystander);
  }

  @Test
  void aRendezvousLongerThanMaxMessageSizeIsRefused() throws Exception {
    refused("a rendezvous of max.message.size + 1 bytes", c -> c.sendRaw(
        VerbsHeader.REQUEST_RNDV, 0, 0, 1, MAX_MESSAGE + 1, 0x1234, 0x10000L));
  }

  @Test
  void aRendezvousOfANegativeLengthIsRefused() throws Exception {
    refused("a rendezvous of -1 bytes", c -> c.sendRaw(
        VerbsHeader.RESPONSE_RNDV, 0, 0, 1, -1, 0x1234, 0x10000L));
    refused("a rendezvous of Integer.MIN_VALUE bytes", c -> c.sendRaw(
        VerbsHeader.REQUEST_RNDV, 0, 0, 1, Integer.MIN_VALUE, 0x1234, 0x10000L));
  }

  @Test
  void aRendezvousWhoseRangeWrapsAroundIsRefused() throws Exception {
    refused("a rendezvous at 2^64 - 16 of 4096 bytes", c -> c.sendRaw(
        VerbsHeader.REQUEST_RNDV, 0, 0, 1, 4096, 0x1234, -16L));
    refused("a rendezvous at address 0", c -> c.sendRaw(
        VerbsHeader.REQUEST_RNDV, 0, 0, 1, 4096, 0x1234, 0L));
  }

  @Test
  void moreCreditsThanTheWindowHoldsAreRefused() throws Exception {
    refused("65535 returned credits", c -> c.sendRaw(VerbsHeader.CREDIT, 0, 0xffff, 0, 0, 0,
        0L));
  }

  @Test
  void anUnknownMessageTypeIsRefused() throws Exception {
    refused("message type 99", c -> c.sendRaw((byte) 99, 0, 0, 0, 0, 0, 0L));
  }

  @Test
  void aRevokeFloodIsRefusedAtTheBound() throws Exception {
    refused("more than " + VerbsConnection.MAX_REVOKED + " revocations", c -> {
      for (int i = 0; i <= VerbsConnection.MAX_REVOKED; i++) {
        c.sendRaw(VerbsHeader.REVOKE, 0, 0, 0, 0, 0, (long) i << 32 | 7);
      }
    });
  }

  @Test
  void aConfirmationOfARevocationNeverAskedForIsRefused() throws Exception {
    // else a peer could end an unexpose's wait for the other peers' confirmations
    refused("a REVOKE_ACK nobody asked for", c -> c.sendRaw(VerbsHeader.REVOKE_ACK, 0, 0, 0, 0,
        0, 5L << 32 | 7));
  }
}
