/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.bench;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * The baseline of {@link TransportBench}: the same message pattern (4-byte length prefix, echo
 * for latency, 8-byte answers for bandwidth with {@code window} messages in flight) over plain
 * blocking {@link Socket}s, one thread per side, in this JVM. Each measurement runs a server
 * thread of its own and ends it with a length prefix of -1.
 */
final class RawSocketBaseline {
  /** A length prefix of -1 ends a raw server. */
  private static final byte[] END = {-1, -1, -1, -1};

  private final InetAddress bind;
  private final long warmupNanos;
  private final long measureNanos;
  private final int window;
  private final int maxSize;
  private final long[] samples;

  RawSocketBaseline(InetAddress bind, long warmupNanos, long measureNanos, int window,
      int maxSize, long[] samples) {
    this.bind = bind;
    this.warmupNanos = warmupNanos;
    this.measureNanos = measureNanos;
    this.window = window;
    this.maxSize = maxSize;
    this.samples = samples;
  }

  /** A blocking server thread: reads length-prefixed messages, answers echo or 8 bytes. */
  private Thread rawServer(ServerSocket ss, boolean echo) {
    Thread t = new Thread(() -> {
      try (Socket s = ss.accept()) {
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        byte[] msg = new byte[4 + maxSize];
        byte[] small = new byte[4 + TransportBench.RESPONSE_BYTES];
        small[3] = TransportBench.RESPONSE_BYTES;
        while (true) {
          in.readFully(msg, 0, 4);
          int len = ((msg[0] & 0xff) << 24) | ((msg[1] & 0xff) << 16) | ((msg[2] & 0xff) << 8)
              | (msg[3] & 0xff);
          if (len < 0) {
            return;
          }
          in.readFully(msg, 4, len);
          if (echo) {
            out.write(msg, 0, 4 + len);
          } else {
            out.write(small);
          }
        }
      } catch (IOException e) {
        // The client closed: the end of this measurement.
      }
    }, "bench-raw-server");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private static byte[] message(int size) {
    byte[] m = new byte[4 + size];
    m[0] = (byte) (size >>> 24);
    m[1] = (byte) (size >>> 16);
    m[2] = (byte) (size >>> 8);
    m[3] = (byte) size;
    return m;
  }

  double[] latency(int size) throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, bind)) {
      Thread server = rawServer(ss, true);
      try (Socket s = new Socket(bind, ss.getLocalPort())) {
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        byte[] msg = message(size);
        byte[] back = new byte[4 + size];
        long end = System.nanoTime() + warmupNanos;
        while (System.nanoTime() < end) {
          rawRoundTrip(in, out, msg, back);
        }
        int n = 0;
        end = System.nanoTime() + measureNanos;
        while (n < TransportBench.MAX_SAMPLES && System.nanoTime() < end) {
          samples[n++] = rawRoundTrip(in, out, msg, back);
        }
        out.write(END);
        return TransportBench.percentiles(samples, n);
      } finally {
        server.join(5000);
      }
    }
  }

  private static long rawRoundTrip(DataInputStream in, OutputStream out, byte[] msg,
      byte[] back) throws IOException {
    long t0 = System.nanoTime();
    out.write(msg);
    in.readFully(back, 0, 4);
    in.readFully(back, 4, msg.length - 4);
    return System.nanoTime() - t0;
  }

  double bandwidth(int size) throws Exception {
    try (ServerSocket ss = new ServerSocket(0, 1, bind)) {
      Thread server = rawServer(ss, false);
      try (Socket s = new Socket(bind, ss.getLocalPort())) {
        s.setTcpNoDelay(true);
        DataInputStream in = new DataInputStream(s.getInputStream());
        OutputStream out = s.getOutputStream();
        byte[] msg = message(size);
        byte[] response = new byte[4 + TransportBench.RESPONSE_BYTES];
        for (int i = 0; i < window; i++) {
          out.write(msg);
        }
        long warmEnd = System.nanoTime() + warmupNanos;
        while (System.nanoTime() < warmEnd) {
          in.readFully(response);
          out.write(msg);
        }
        long t0 = System.nanoTime();
        long end = t0 + measureNanos;
        long done = 0;
        while (System.nanoTime() < end) {
          in.readFully(response);
          done++;
          out.write(msg);
        }
        long elapsed = System.nanoTime() - t0;
        for (int i = 0; i < window; i++) {
          in.readFully(response);
        }
        out.write(END);
        return done * (double) size / elapsed * 1e3;
      } finally {
        server.join(5000);
      }
    }
  }
}
