/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Flow-control rules, including the checks on credits a peer returns. */
class VerbsCreditsTest {
  @Test
  void aPeerCannotReturnMoreThanItWasSent() {
    VerbsCredits c = new VerbsCredits();
    c.peerWindow(8);
    assertFalse(c.returned(1), "nothing was sent yet, nothing can come back");
    c.sent(0);
    c.sent(0);
    c.sent(0);
    assertEquals(3, c.outstanding());
    assertFalse(c.returned(4));
    assertEquals(3, c.outstanding(), "a refused return changes nothing");
    assertTrue(c.returned(3));
    assertEquals(0, c.outstanding());
    assertFalse(c.returned(0xffff));
  }

  @Test
  void theLastCreditIsKeptForCreditMessages() {
    VerbsCredits c = new VerbsCredits();
    c.peerWindow(4);
    c.ownWindow(4);
    c.sent(0);
    c.sent(0);
    assertTrue(c.canSendMessage());
    c.sent(0);
    assertFalse(c.canSendMessage(), "one credit left: only for a CREDIT message");
    c.reposted();
    assertFalse(c.creditMessageDue(false), "one owed, threshold 2");
    c.reposted();
    assertTrue(c.creditMessageDue(true));
    assertEquals(2, c.toReturn());
    c.sent(2);
    assertEquals(0, c.toReturn());
  }

  @Test
  void windowsOutsideOneToTheLimitAreRefused() {
    assertFalse(VerbsCredits.validWindow(0));
    assertFalse(VerbsCredits.validWindow(-1));
    assertTrue(VerbsCredits.validWindow(1));
    assertTrue(VerbsCredits.validWindow(VerbsCredits.MAX_PEER_WINDOW));
    assertFalse(VerbsCredits.validWindow(VerbsCredits.MAX_PEER_WINDOW + 1));
  }
}
