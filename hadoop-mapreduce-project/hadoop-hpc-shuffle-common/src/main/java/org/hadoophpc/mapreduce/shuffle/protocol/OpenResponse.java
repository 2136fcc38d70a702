/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The service's answer to an {@link OpenRequest}: {@code servicePort} (the stock shuffle port of
 * the NodeManager it belongs to) and {@code hpcPort} (the port it listens on), its fresh
 * {@code nonce}, {@code replyHash} (the MAC with the job secret over both nonces, both ports,
 * the chunk size, the session and the request's hash: the service holds the token and answers
 * this open, on this port, now) and one {@link Partition} per requested map, in request order.
 * The session id is not on the wire: both sides derive it from the nonces and the job secret
 * ({@code ShuffleAuth.session}), so a peer replaying a recorded open cannot read its session.
 */
public record OpenResponse(int servicePort, int hpcPort, byte[] nonce, String replyHash,
    List<Partition> partitions) {

  /** What the service found for one map. */
  public enum Status {
    OK, NOT_FOUND, ERROR
  }

  /**
   * One map's partition: {@code rawLength} (uncompressed IFile bytes) and {@code partLength}
   * (bytes on disk, what is read); {@code message} explains a status other than OK.
   */
  public record Partition(Status status, long rawLength, long partLength, String message) {
    public static Partition ok(long rawLength, long partLength) {
      return new Partition(Status.OK, rawLength, partLength, "");
    }

    public static Partition failed(Status status, String message) {
      return new Partition(status, -1, -1, message);
    }
  }

  public OpenResponse {
    partitions = List.copyOf(partitions);
    nonce = Wire.nonceCopy(nonce);
  }

  @Override
  public byte[] nonce() {
    return nonce.clone();
  }

  public int encodedSize() {
    int n = 4 + 4 + Wire.NONCE_BYTES + Wire.utfBytes(replyHash) + 4;
    for (Partition p : partitions) {
      n += 1 + 8 + 8 + Wire.utfBytes(p.message());
    }
    return n;
  }

  public void encode(ByteBuffer out) {
    out.putInt(servicePort).putInt(hpcPort);
    Wire.putNonce(out, nonce);
    Wire.putUtf(out, replyHash);
    out.putInt(partitions.size());
    for (Partition p : partitions) {
      out.put((byte) p.status().ordinal()).putLong(p.rawLength()).putLong(p.partLength());
      Wire.putUtf(out, p.message());
    }
  }

  public static OpenResponse decode(ByteBuffer in) throws ProtocolException {
    try {
      int servicePort = in.getInt();
      int hpcPort = in.getInt();
      byte[] nonce = Wire.getNonce(in);
      String reply = Wire.getUtf(in);
      int n = in.getInt();
      if (n < 0 || n > Wire.MAX_MAPS) {
        throw new ProtocolException("bad open response: " + n + " partitions");
      }
      List<Partition> parts = new ArrayList<>(n);
      Status[] statuses = Status.values();
      for (int i = 0; i < n; i++) {
        int s = in.get();
        if (s < 0 || s >= statuses.length) {
          throw new ProtocolException("bad open response: partition status " + s);
        }
        parts.add(new Partition(statuses[s], in.getLong(), in.getLong(), Wire.getUtf(in)));
      }
      return new OpenResponse(servicePort, hpcPort, nonce, reply, parts);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated open response");
    }
  }
}
