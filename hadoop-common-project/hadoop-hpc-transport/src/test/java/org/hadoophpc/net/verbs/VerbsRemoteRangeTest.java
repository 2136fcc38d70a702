/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Remote address ranges (unsigned) that wrap around are caught before posting. */
class VerbsRemoteRangeTest {
  @Test
  void addressRangesThatPassTwoToTheSixtyFourWrap() {
    assertFalse(VerbsConnection.wraps(0x1000L, 4096));
    assertFalse(VerbsConnection.wraps(-4097L, 4096), "ends at 2^64 - 1");
    assertTrue(VerbsConnection.wraps(-4096L, 4096), "ends at 2^64");
    assertTrue(VerbsConnection.wraps(-16L, Long.MAX_VALUE));
    assertFalse(VerbsConnection.wraps(Long.MAX_VALUE, 1), "2^63 is an address like any");
  }
}
