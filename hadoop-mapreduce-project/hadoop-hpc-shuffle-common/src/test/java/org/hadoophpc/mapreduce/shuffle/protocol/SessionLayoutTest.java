/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The session stream both sides agree on: which bytes a read names. */
class SessionLayoutTest {
  /** maps: 0 = 100 bytes, 1 not served, 2 empty, 3 = 50, 4 empty, 5 = 1. */
  private final SessionLayout layout = new SessionLayout(new long[] {100, -1, 0, 50, 0, 1});

  @Test
  void servedPartitionsFollowEachOther() {
    assertEquals(151, layout.total());
    assertEquals(0, layout.start(0));
    assertFalse(layout.served(1));
    assertEquals(100, layout.start(2));
    assertEquals(100, layout.start(3));
    assertEquals(150, layout.start(5));
    assertFalse(layout.served(-1));
    assertFalse(layout.served(6));
  }

  @Test
  void everyByteBelongsToTheMapWhosePartitionHoldsIt() {
    assertEquals(0, layout.mapAt(0));
    assertEquals(0, layout.mapAt(99));
    assertEquals(3, layout.mapAt(100), "empty partitions hold no byte");
    assertEquals(3, layout.mapAt(149));
    assertEquals(5, layout.mapAt(150));
    assertThrows(IllegalArgumentException.class, () -> layout.mapAt(151));
    assertThrows(IllegalArgumentException.class, () -> layout.mapAt(-1));
  }

  @Test
  void readsChunkTheStreamAcrossPartitions() {
    List<SessionLayout.ReadSpan> reads = new ArrayList<>();
    for (long at = 0; at < layout.total(); ) {
      SessionLayout.ReadSpan r = layout.spanAt(at, 64);
      assertEquals(at, layout.position(r.map(), r.offset(), r.length()));
      reads.add(r);
      at += r.length();
    }
    assertEquals(List.of(new SessionLayout.ReadSpan(0, 0, 64),
        new SessionLayout.ReadSpan(0, 64, 64), new SessionLayout.ReadSpan(3, 28, 23)), reads);
  }

  @Test
  void readsOutsideTheStreamAreRefused() {
    assertEquals(-1, layout.position(1, 0, 1), "a map not served");
    assertEquals(-1, layout.position(2, 0, 1), "nothing at an empty partition");
    assertEquals(-1, layout.position(0, 100, 1), "offset past the partition");
    assertEquals(-1, layout.position(3, 0, 52), "past the stream's end");
    assertEquals(-1, layout.position(0, 0, 0), "nothing asked");
    assertEquals(-1, layout.position(0, -1, 5));
    assertEquals(-1, layout.position(0, Long.MAX_VALUE - 5, 100));
    assertEquals(-1, layout.position(0, 1, Integer.MAX_VALUE));
    assertEquals(100, layout.position(3, 0, 51), "a read may end at the stream's end");
    assertTrue(layout.position(0, 99, 52) == 99, "and may start in one partition and go on");
  }

  @Test
  void theLayoutOfAnOpenAnswerLeavesFailedMapsOut() {
    SessionLayout l = SessionLayout.of(List.of(OpenResponse.Partition.ok(10, 7),
        OpenResponse.Partition.failed(OpenResponse.Status.NOT_FOUND, "gone"),
        OpenResponse.Partition.ok(3, 3)));
    assertEquals(10, l.total());
    assertEquals(7, l.start(2));
    assertFalse(l.served(1));
  }
}
