/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.SecureShuffleUtils;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;

/**
 * Stock's shuffle authentication applied to our open request: the reducer sends the HMAC (job
 * token secret, Hadoop's {@link SecureShuffleUtils}) of what it asks for; the service checks it
 * and answers with the HMAC of that hash, which the reducer checks in turn. Comparisons are
 * constant-time.
 */
public final class ShuffleAuth {
  private ShuffleAuth() {
  }

  /** The hash a reducer puts in its open request. */
  public static String requestHash(String jobId, int reduce, List<String> maps, SecretKey key) {
    return hash(OpenRequest.canonical(jobId, reduce, maps), key);
  }

  /** True when {@code request}'s hash was made with {@code key}. */
  public static boolean verifyRequest(OpenRequest request, SecretKey key) {
    return same(hash(request.canonical(), key), request.hash());
  }

  /** The service's reply to a verified request hash. */
  public static String replyHash(String requestHash, SecretKey key) {
    return hash(requestHash, key);
  }

  /** True when {@code reply} answers {@code requestHash} under {@code key}. */
  public static boolean verifyReply(String reply, String requestHash, SecretKey key) {
    return same(hash(requestHash, key), reply);
  }

  private static String hash(String text, SecretKey key) {
    return SecureShuffleUtils.generateHash(text.getBytes(StandardCharsets.UTF_8), key);
  }

  private static boolean same(String expected, String given) {
    return given != null && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
        given.getBytes(StandardCharsets.UTF_8));
  }
}
