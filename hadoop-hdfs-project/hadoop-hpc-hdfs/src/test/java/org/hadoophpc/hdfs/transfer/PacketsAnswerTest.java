/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * A PACKETS answer (heads first, then the packets' data as one file range) is handed to the
 * reader in stream order, and an answer whose lengths do not add up is refused.
 */
class PacketsAnswerTest {
  private static ByteBuffer answer(int[] heads, int[] data, int extra) {
    int total = 4 + 8 * heads.length + extra;
    for (int i = 0; i < heads.length; i++) {
      total += heads[i] + data[i];
    }
    ByteBuffer b = ByteBuffer.allocate(total + 16);
    b.position(16); // an answer header before the payload
    b.putInt(heads.length);
    for (int i = 0; i < heads.length; i++) {
      b.putInt(heads[i]).putInt(data[i]);
    }
    for (int i = 0; i < heads.length; i++) {
      for (int j = 0; j < heads[i]; j++) {
        b.put((byte) ('H' + i));
      }
    }
    for (int i = 0; i < heads.length; i++) {
      for (int j = 0; j < data[i]; j++) {
        b.put((byte) ('a' + i));
      }
    }
    b.position(b.position() + extra);
    b.flip();
    b.position(16);
    return b;
  }

  @Test
  void headsAndDataComeBackInPacketOrder() {
    ByteBuffer[] views = ClientPipe.packets(answer(new int[] {0, 3, 2}, new int[] {5, 4, 1}, 0));
    assertEquals(6, views.length);
    ByteArrayOutputStream got = new ByteArrayOutputStream();
    for (ByteBuffer v : views) {
      while (v.hasRemaining()) {
        got.write(v.get());
      }
    }
    assertArrayEquals("aaaaaIIIbbbbJJc".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
        got.toByteArray());
  }

  @Test
  void lengthsThatDoNotAddUpAreRefused() {
    assertNull(ClientPipe.packets(answer(new int[] {1}, new int[] {4}, 1)), "bytes left over");
    ByteBuffer shortOne = answer(new int[] {1, 1}, new int[] {4, 4}, 0);
    shortOne.limit(shortOne.limit() - 1);
    assertNull(ClientPipe.packets(shortOne), "a byte missing");
    ByteBuffer none = ByteBuffer.allocate(4).putInt(0).flip();
    assertNull(ClientPipe.packets(none), "no packet");
    ByteBuffer negative = answer(new int[] {1}, new int[] {4}, 0);
    negative.putInt(negative.position() + 4, -1);
    assertNull(ClientPipe.packets(negative), "a negative length");
    ByteBuffer huge = ByteBuffer.allocate(8).putInt(Integer.MAX_VALUE).putInt(0).flip();
    assertNull(ClientPipe.packets(huge), "more packets than an answer may hold");
  }
}
