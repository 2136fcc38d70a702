/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.hadoophpc.net.verbs.VerbsRig.await;
import static org.hadoophpc.net.verbs.VerbsRig.filled;
import static org.hadoophpc.net.verbs.VerbsRig.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A server whose handler authenticates (rxe0 in the Soft-RoCE lane): before its peer is trusted
 * the connection admits one request at a time, rendezvous of at most
 * {@link Connection#UNTRUSTED_MAX_MESSAGE_BYTES}, and closes a peer that does not authenticate
 * within the i/o timeout, giving its memory back; once trusted, the peer is served as any other.
 * The handler trusts a peer whose request starts with {@code 'A'} and holds (never answers) one
 * that starts with {@code 'H'}.
 */
class UntrustedPeerVerbsTest {
  private static final String IO_TIMEOUT = "4s";

  private VerbsRig rig;
  private VerbsTransport server;
  private Listener listener;
  private VerbsTransport clients;

  @BeforeEach
  void start() throws Exception {
    rig = VerbsRig.find();
    Configuration c = VerbsRig.smallConf(IO_TIMEOUT);
    server = rig.open(c);
    listener = server.listen(rig.bindAddress(), new RequestHandler() {
      @Override
      public boolean authenticates() {
        return true;
      }

      @Override
      public void onRequest(Connection conn, Buffer request, Responder responder) {
        byte first = request.nio().get(0);
        if (first == 'H') {
          request.release(); // held: never answered
          return;
        }
        if (first == 'A') {
          conn.trust();
        }
        responder.respond(request); // echo
      }
    });
    clients = rig.open(c);
  }

  @AfterEach
  void stop() throws Exception {
    if (rig != null) {
      rig.close();
    }
  }

  private Buffer request(char first, int size) {
    Buffer b = filled(clients.bufferPool(), size, size);
    b.nio().put(0, (byte) first);
    return b;
  }

  /** Connects, lets {@code attack} run, and checks the server closed it and freed its memory. */
  private void refused(String what, java.util.function.Consumer<VerbsConnection> attack)
      throws Exception {
    long usedBefore = server.registeredMemory().usedBytes();
    VerbsConnection hostile = rig.connect(clients, listener.address());
    attack.accept(hostile);
    waitFor(() -> !hostile.isOpen(), "the server closed the connection after " + what);
    waitFor(() -> server.registeredMemory().usedBytes() == usedBefore,
        "the server's pool memory returned after " + what);
  }

  @Test
  void aPeerThatNeverAuthenticatesIsClosedAfterTheIoTimeout() throws Exception {
    refused("no authentication within " + IO_TIMEOUT, c -> { });
  }

  @Test
  void aLargeRequestBeforeAuthenticatingIsRefused() throws Exception {
    refused("a rendezvous request of 256 KiB + 1 before authenticating", c -> c.sendRaw(
        VerbsHeader.REQUEST_RNDV, 0, 0, 1, Connection.UNTRUSTED_MAX_MESSAGE_BYTES + 1, 0x1234,
        0x10000L));
  }

  @Test
  void aSecondRequestWhileOneIsUnansweredIsRefused() throws Exception {
    refused("a second request before authenticating", c -> {
      c.request(request('H', 100));
      c.request(request('x', 100));
    });
  }

  @Test
  void messagesOtherThanRequestsBeforeAuthenticatingAreRefused() throws Exception {
    refused("a revocation before authenticating", c -> c.sendRaw(VerbsHeader.REVOKE, 0, 0, 0,
        0, 0, 7L));
  }

  @Test
  void anAuthenticatedPeerIsServedAsAnyOther() throws Exception {
    VerbsConnection c = rig.connect(clients, listener.address());
    Buffer hello = await(c.request(request('A', 100)));
    hello.release();
    assertTrue(c.isOpen());
    // pipelined requests, eager and rendezvous, up to max.message.size
    List<CompletableFuture<Buffer>> answers = new ArrayList<>();
    int[] sizes = {100, 300_000, 1 << 20, 5000};
    for (int size : sizes) {
      answers.add(c.request(request('x', size)));
    }
    for (int i = 0; i < sizes.length; i++) {
      Buffer got = await(answers.get(i));
      Buffer want = request('x', sizes[i]);
      assertEquals(want.nio(), got.nio(), "echo of " + sizes[i] + " bytes");
      want.release();
      got.release();
    }
    // past the deadline an untrusted peer would have had to authenticate by: still served
    Thread.sleep(4500);
    assertTrue(c.isOpen());
    assertFalse(c.inFlight() > 0);
  }
}
