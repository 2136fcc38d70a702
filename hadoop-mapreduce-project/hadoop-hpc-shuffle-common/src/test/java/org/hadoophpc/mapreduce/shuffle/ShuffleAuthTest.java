/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.mapreduce.shuffle.protocol.VersionMismatchException;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;
import org.junit.jupiter.api.Test;

/**
 * The open's mutual proof: the service's answer is bound to the reducer's nonce, the ports it
 * meant and the request, so a wrong MAC, a replayed answer and an answer relayed from another
 * port all fail; the request's MAC binds its nonce, ports and chunk size.
 */
class ShuffleAuthTest {
  private static final SecretKey KEY = key("job token");
  private static final String JOB = "job_1700000000000_0007";
  private static final List<String> MAPS = List.of("attempt_1700000000000_0007_m_000000_0",
      "attempt_1700000000000_0007_m_000001_0");
  private static final int STOCK = 13562;
  private static final int HPC = 13563;
  private static final int CHUNK = 512 << 10;

  private static SecretKey key(String password) {
    return JobTokenSecretManager.createSecretKey(password.getBytes(StandardCharsets.UTF_8));
  }

  private static OpenRequest open() {
    return ShuffleAuth.open(STOCK, HPC, JOB, 3, CHUNK, MAPS, KEY);
  }

  /** What a service holding {@code key} on ports {@code stock}/{@code hpc} answers. */
  private static OpenResponse answer(OpenRequest r, int stock, int hpc, SecretKey key) {
    byte[] nonce = ShuffleAuth.nonce();
    return new OpenResponse(stock, hpc, nonce, ShuffleAuth.replyHash(r, stock, hpc, nonce, key),
        List.of(OpenResponse.Partition.ok(10, 10), OpenResponse.Partition.ok(20, 20)));
  }

  @Test
  void aGenuineAnswerVerifies() {
    OpenRequest r = open();
    assertTrue(ShuffleAuth.verifyRequest(r, KEY));
    assertTrue(ShuffleAuth.verifyReply(answer(r, STOCK, HPC, KEY), r, KEY));
  }

  @Test
  void anAnswerWithoutTheJobTokenIsRejected() {
    OpenRequest r = open();
    assertFalse(ShuffleAuth.verifyReply(answer(r, STOCK, HPC, key("another token")), r, KEY));
    OpenResponse good = answer(r, STOCK, HPC, KEY);
    for (String mac : new String[] {"", "AAAA", r.hash()}) {
      OpenResponse forged = new OpenResponse(STOCK, HPC, good.nonce(), mac, good.partitions());
      assertFalse(ShuffleAuth.verifyReply(forged, r, KEY), mac);
    }
  }

  @Test
  void aReplayedAnswerIsRejected() {
    OpenRequest first = open();
    OpenResponse recorded = answer(first, STOCK, HPC, KEY);
    assertTrue(ShuffleAuth.verifyReply(recorded, first, KEY));
    // the same open again (same job, reduce, maps, ports): only the nonce differs
    OpenRequest again = open();
    assertFalse(ShuffleAuth.verifyReply(recorded, again, KEY));
  }

  @Test
  void anAnswerForAnotherPortIsRejected() {
    OpenRequest r = open();
    // relayed: the service on HPC + 1 answered an open the reducer sent to HPC
    assertFalse(ShuffleAuth.verifyReply(answer(r, STOCK, HPC + 1, KEY), r, KEY));
    // another NodeManager's service
    assertFalse(ShuffleAuth.verifyReply(answer(r, STOCK + 10, HPC, KEY), r, KEY));
  }

  @Test
  void theRequestMacBindsNoncePortsAndChunk() {
    OpenRequest r = open();
    List<OpenRequest> altered = List.of(
        new OpenRequest(STOCK, HPC, JOB, 3, CHUNK, MAPS, ShuffleAuth.nonce(), r.hash()),
        new OpenRequest(STOCK, HPC + 1, JOB, 3, CHUNK, MAPS, r.nonce(), r.hash()),
        new OpenRequest(STOCK + 1, HPC, JOB, 3, CHUNK, MAPS, r.nonce(), r.hash()),
        new OpenRequest(STOCK, HPC, JOB, 3, CHUNK * 2, MAPS, r.nonce(), r.hash()),
        new OpenRequest(STOCK, HPC, JOB, 4, CHUNK, MAPS, r.nonce(), r.hash()),
        new OpenRequest(STOCK, HPC, JOB, 3, CHUNK, MAPS.subList(0, 1), r.nonce(), r.hash()));
    for (OpenRequest a : altered) {
      assertFalse(ShuffleAuth.verifyRequest(a, KEY), a.canonical());
    }
    assertFalse(ShuffleAuth.verifyRequest(r, key("another token")));
  }

  @Test
  void sessionIdsNeedTheTokenAndBothNonces() {
    byte[] a = ShuffleAuth.nonce();
    byte[] b = ShuffleAuth.nonce();
    assertEquals(ShuffleAuth.session(a, b, KEY), ShuffleAuth.session(a.clone(), b.clone(), KEY));
    assertNotEquals(ShuffleAuth.session(a, b, KEY), ShuffleAuth.session(a, b, key("other")));
    assertNotEquals(ShuffleAuth.session(a, b, KEY), ShuffleAuth.session(a, ShuffleAuth.nonce(),
        KEY));
    assertNotEquals(ShuffleAuth.session(a, b, KEY), ShuffleAuth.session(b, a, KEY));
  }

  @Test
  void openMessagesRoundTrip() throws Exception {
    OpenRequest r = open();
    ByteBuffer b = ByteBuffer.allocate(r.encodedSize());
    r.encode(b);
    assertEquals(0, b.remaining());
    b.flip();
    assertEquals(Wire.TYPE_OPEN, Wire.type(b));
    OpenRequest d = OpenRequest.decode(b);
    assertEquals(r.canonical(), d.canonical());
    assertEquals(r.hash(), d.hash());
    assertTrue(ShuffleAuth.verifyRequest(d, KEY));

    OpenResponse o = answer(r, STOCK, HPC, KEY);
    ByteBuffer ob = ByteBuffer.allocate(o.encodedSize());
    o.encode(ob);
    assertEquals(0, ob.remaining());
    ob.flip();
    OpenResponse od = OpenResponse.decode(ob);
    assertArrayEquals(o.nonce(), od.nonce());
    assertEquals(HPC, od.hpcPort());
    assertTrue(ShuffleAuth.verifyReply(od, d, KEY));
  }

  @Test
  void aMessageOfAnotherVersionIsATypedError() {
    ByteBuffer old = ByteBuffer.allocate(16);
    old.putInt(Wire.MAGIC).put((byte) (Wire.VERSION - 1)).put(Wire.TYPE_OPEN).flip();
    VersionMismatchException e = assertThrows(VersionMismatchException.class,
        () -> Wire.type(old));
    assertTrue(e.getMessage().contains("different hadoop-hpc releases"), e.getMessage());
    assertEquals(ShuffleError.VERSION, ShuffleError.of(8));
  }
}
