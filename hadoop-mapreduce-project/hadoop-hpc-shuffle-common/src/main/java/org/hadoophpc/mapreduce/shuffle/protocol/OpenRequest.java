/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A reducer opens a fetch session: the partition {@code reduce} of the outputs of {@code maps}
 * (map attempt ids) of {@code jobId}. {@code hash} is the HMAC of {@link #canonical()} with the
 * job token's secret (the scheme stock's Fetcher uses for its URL), so the service rejects
 * reducers of other jobs. {@code chunkSize} tells the service how much of each partition to read
 * ahead. {@code servicePort} is the stock shuffle port of the NodeManager the reducer means (from
 * the map's location): a service of another NodeManager answers {@link ShuffleError#WRONG_SERVICE}
 * before it looks at anything else; 0 asks any service (tools, tests).
 */
public record OpenRequest(int servicePort, String jobId, int reduce, int chunkSize,
    List<String> maps, String hash) {

  public OpenRequest {
    maps = List.copyOf(maps);
  }

  /** The text the HMAC covers: everything that selects data. */
  public String canonical() {
    return canonical(jobId, reduce, maps);
  }

  public static String canonical(String jobId, int reduce, List<String> maps) {
    return "hpc-shuffle/" + Wire.VERSION + " job=" + jobId + " reduce=" + reduce + " maps="
        + String.join(",", maps);
  }

  public int encodedSize() {
    int n = Wire.HEADER_BYTES + 4 + Wire.utfBytes(jobId) + 4 + 4 + 4 + Wire.utfBytes(hash);
    for (String m : maps) {
      n += Wire.utfBytes(m);
    }
    return n;
  }

  public void encode(ByteBuffer out) {
    Wire.putHeader(out, Wire.TYPE_OPEN);
    out.putInt(servicePort);
    Wire.putUtf(out, jobId);
    out.putInt(reduce).putInt(chunkSize).putInt(maps.size());
    for (String m : maps) {
      Wire.putUtf(out, m);
    }
    Wire.putUtf(out, hash);
  }

  /** Decodes the body after {@link Wire#type}. */
  public static OpenRequest decode(ByteBuffer in) throws ProtocolException {
    try {
      int servicePort = in.getInt();
      String job = Wire.getUtf(in);
      int reduce = in.getInt();
      int chunk = in.getInt();
      int n = in.getInt();
      if (servicePort < 0 || servicePort > 65535 || reduce < 0 || chunk <= 0 || n < 0
          || n > Wire.MAX_MAPS) {
        throw new ProtocolException("bad open request: service port " + servicePort + ", reduce "
            + reduce + ", chunk " + chunk + ", " + n + " maps");
      }
      List<String> maps = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        maps.add(Wire.getUtf(in));
      }
      return new OpenRequest(servicePort, job, reduce, chunk, maps, Wire.getUtf(in));
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated open request");
    }
  }
}
