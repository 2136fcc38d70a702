/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.SecureShuffleUtils;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;

/**
 * Mutual authentication of an open, with stock's primitive (the HMAC of Hadoop's
 * {@link SecureShuffleUtils} keyed with the job token's secret) over fresh nonces:
 * <ol>
 * <li>the reducer sends a fresh nonce, the stock port of the NodeManager it means, the hpc port
 * it connected to, the chunk size and what it asks for, with the MAC of all of it
 * ({@link #open});</li>
 * <li>the service checks that MAC ({@link #verifyRequest}), picks a fresh nonce of its own and
 * answers with the MAC, under another label, over both nonces, its own stock and hpc ports, the
 * chunk size, the session and the request's MAC ({@link #replyHash});</li>
 * <li>the reducer checks that MAC against the ports it meant before it reads anything
 * ({@link #verifyReply}).</li>
 * </ol>
 * A peer without the token cannot answer (no MAC), cannot relay an open to a service on another
 * port (the service MACs the port it listens on, the reducer expects the one it connected to),
 * and cannot replay a recorded answer (the reducer's nonce differs). A replayed request is
 * answered, but the session it opens is named by an id both sides derive from the two nonces
 * and the secret ({@link #session}) and that never travels, so the replayer cannot read it.
 * Comparisons are constant-time.
 */
public final class ShuffleAuth {
  private static final SecureRandom RANDOM = new SecureRandom();

  private ShuffleAuth() {
  }

  /** {@link Wire#NONCE_BYTES} fresh random bytes. */
  public static byte[] nonce() {
    byte[] b = new byte[Wire.NONCE_BYTES];
    RANDOM.nextBytes(b);
    return b;
  }

  /** A reducer's open request, with a fresh nonce, MACed with {@code key}. */
  public static OpenRequest open(int servicePort, int hpcPort, String jobId, int reduce,
      int chunkSize, List<String> maps, SecretKey key) {
    return open(servicePort, hpcPort, jobId, reduce, chunkSize, maps, nonce(), key);
  }

  /** A reducer's open request with the nonce given (tests), MACed with {@code key}. */
  public static OpenRequest open(int servicePort, int hpcPort, String jobId, int reduce,
      int chunkSize, List<String> maps, byte[] nonce, SecretKey key) {
    String hash = hash(OpenRequest.canonical(servicePort, hpcPort, jobId, reduce, chunkSize,
        maps, nonce), key);
    return new OpenRequest(servicePort, hpcPort, jobId, reduce, chunkSize, maps, nonce, hash);
  }

  /** True when {@code request}'s MAC was made with {@code key}. */
  public static boolean verifyRequest(OpenRequest request, SecretKey key) {
    return same(hash(request.canonical(), key), request.hash());
  }

  /**
   * The service's MAC for its answer to a verified {@code request}: it is the service of the
   * NodeManager with stock port {@code servicePort}, listening on {@code hpcPort}, and answers
   * with {@code serviceNonce}.
   */
  public static String replyHash(OpenRequest request, int servicePort, int hpcPort,
      byte[] serviceNonce, SecretKey key) {
    return hash(replyCanonical(request, servicePort, hpcPort, serviceNonce, key), key);
  }

  /**
   * True when {@code reply} answers {@code request} under {@code key}, from the service of the
   * NodeManager the request named ({@code request.servicePort()}; 0: any) listening on the port
   * the reducer connected to ({@code request.hpcPort()}).
   */
  public static boolean verifyReply(OpenResponse reply, OpenRequest request, SecretKey key) {
    int servicePort = request.servicePort() == 0 ? reply.servicePort() : request.servicePort();
    return same(hash(replyCanonical(request, servicePort, request.hpcPort(), reply.nonce(),
        key), key), reply.replyHash());
  }

  /**
   * The id of the session an open with these nonces opens: the first 8 bytes of their MAC.
   * Only holders of the token can compute it; reads and closes name it.
   */
  public static long session(byte[] reducerNonce, byte[] serviceNonce, SecretKey key) {
    String text = "hpc-shuffle/" + Wire.VERSION + " session reducer-nonce="
        + HexFormat.of().formatHex(reducerNonce) + " service-nonce="
        + HexFormat.of().formatHex(serviceNonce);
    byte[] mac = Base64.getDecoder().decode(hash(text, key));
    return ByteBuffer.wrap(mac, 0, Long.BYTES).getLong();
  }

  private static String replyCanonical(OpenRequest request, int servicePort, int hpcPort,
      byte[] serviceNonce, SecretKey key) {
    return "hpc-shuffle/" + Wire.VERSION + " reply port=" + servicePort + " hpc-port=" + hpcPort
        + " chunk=" + request.chunkSize() + " reducer-nonce="
        + HexFormat.of().formatHex(request.nonce()) + " service-nonce="
        + HexFormat.of().formatHex(serviceNonce) + " session="
        + session(request.nonce(), serviceNonce, key) + " request=" + request.hash();
  }

  private static String hash(String text, SecretKey key) {
    return SecureShuffleUtils.generateHash(text.getBytes(StandardCharsets.UTF_8), key);
  }

  private static boolean same(String expected, String given) {
    return given != null && MessageDigest.isEqual(expected.getBytes(StandardCharsets.UTF_8),
        given.getBytes(StandardCharsets.UTF_8));
  }
}
