/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.api.Test;

class InflightTableTest {
  private static final class Op extends InflightTable.Entry {
  }

  @Test
  void placesAreBoundedByTheCapacity() {
    InflightTable<Op> t = new InflightTable<>(2, Long.MAX_VALUE);
    assertTrue(t.acquire());
    assertTrue(t.acquire());
    assertFalse(t.acquire(), "a third place of two");
    assertEquals(2, t.count());
    t.release();
    assertTrue(t.acquire());
  }

  @Test
  void anIdFindsItsOperationOnlyWhileItIsInTheTable() {
    InflightTable<Op> t = new InflightTable<>(4, Long.MAX_VALUE);
    Op a = new Op();
    long id = t.add(a);
    assertTrue(id >= 1 && a.inTable() && a.inflightId() == id);
    assertSame(a, t.find(id));
    assertTrue(t.remove(a));
    assertFalse(t.remove(a), "removing twice does nothing");
    assertNull(t.find(id), "an ended operation's id finds nothing");
    Op b = new Op();
    long reused = t.add(b); // the same slot, a new generation
    assertEquals(id % 4, reused % 4);
    assertTrue(reused != id);
    assertNull(t.find(id), "a late answer to the reused slot finds nothing");
    assertSame(b, t.find(reused));
    assertNull(t.find(0));
    assertNull(t.find(-reused));
    assertNull(t.find(reused + 4), "a forged id of a later generation finds nothing");
  }

  @Test
  void idsStayWithinTheWireRangeAndStayDistinctAcrossTheWrap() {
    int capacity = 8;
    long maxId = 100; // a tiny wire range: the generation wraps every few adds
    InflightTable<Op> t = new InflightTable<>(capacity, maxId);
    Op[] held = new Op[capacity - 1];
    Set<Long> live = new HashSet<>();
    for (int i = 0; i < held.length; i++) {
      held[i] = new Op();
      live.add(t.add(held[i]));
    }
    Op cycling = new Op();
    for (int i = 0; i < 1000; i++) {
      long id = t.add(cycling);
      assertTrue(id >= 1 && id <= maxId, "id " + id);
      assertFalse(live.contains(id), "a new id never equals a live one");
      assertSame(cycling, t.find(id));
      t.remove(cycling);
    }
    for (Op o : held) {
      assertSame(o, t.find(o.inflightId()), "the others are still found by their ids");
    }
  }

  @Test
  void addingMoreThanTheCapacityIsAProgrammingError() {
    InflightTable<Op> t = new InflightTable<>(1, Long.MAX_VALUE);
    t.add(new Op());
    assertThrows(IllegalStateException.class, () -> t.add(new Op()));
    assertThrows(IllegalArgumentException.class, () -> new InflightTable<Op>(0, 10));
  }
}
