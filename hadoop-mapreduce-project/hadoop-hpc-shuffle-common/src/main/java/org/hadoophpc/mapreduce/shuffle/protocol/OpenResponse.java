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
 * the NodeManager it belongs to, which the reducer checks against the map's location),
 * {@code replyHash} (HMAC of the request's hash
 * with the job secret, proving the service holds the token), the session to read with, and one
 * {@link Partition} per requested map, in request order.
 */
public record OpenResponse(int servicePort, String replyHash, long session,
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
  }

  public int encodedSize() {
    int n = 4 + Wire.utfBytes(replyHash) + 8 + 4;
    for (Partition p : partitions) {
      n += 1 + 8 + 8 + Wire.utfBytes(p.message());
    }
    return n;
  }

  public void encode(ByteBuffer out) {
    out.putInt(servicePort);
    Wire.putUtf(out, replyHash);
    out.putLong(session).putInt(partitions.size());
    for (Partition p : partitions) {
      out.put((byte) p.status().ordinal()).putLong(p.rawLength()).putLong(p.partLength());
      Wire.putUtf(out, p.message());
    }
  }

  public static OpenResponse decode(ByteBuffer in) throws ProtocolException {
    try {
      int servicePort = in.getInt();
      String reply = Wire.getUtf(in);
      long session = in.getLong();
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
      return new OpenResponse(servicePort, reply, session, parts);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated open response");
    }
  }
}
