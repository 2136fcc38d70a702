/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.junit.jupiter.api.Test;

class IntMapTest {

  @Test
  void behavesLikeAHashMapUnderMixedPutsAndRemoves() {
    // Keys from a small range collide and wrap around the table; removals must keep every
    // remaining key reachable.
    Random random = new Random(42);
    IntMap<String> map = new IntMap<>();
    Map<Integer, String> reference = new HashMap<>();
    for (int step = 0; step < 200_000; step++) {
      int key = random.nextInt(300) * (random.nextBoolean() ? 64 : -7);
      if (random.nextInt(3) == 0) {
        assertEquals(reference.remove(key), map.remove(key), "remove " + key);
      } else {
        String value = "v" + step;
        assertEquals(reference.put(key, value), map.put(key, value), "put " + key);
      }
      if (step % 1000 == 0) {
        for (Map.Entry<Integer, String> e : reference.entrySet()) {
          assertEquals(e.getValue(), map.get(e.getKey()));
        }
      }
      assertEquals(reference.size(), map.size());
    }
  }

  @Test
  void clearHandsOverEveryValueOnce() {
    IntMap<Integer> map = new IntMap<>();
    for (int i = 0; i < 1000; i++) {
      map.put(i * 31, i);
    }
    List<Integer> seen = new ArrayList<>();
    map.clear(seen::add);
    assertEquals(1000, seen.size());
    assertEquals(1000 * 999 / 2, seen.stream().mapToInt(Integer::intValue).sum());
    assertEquals(0, map.size());
    assertNull(map.get(31));
  }
}
