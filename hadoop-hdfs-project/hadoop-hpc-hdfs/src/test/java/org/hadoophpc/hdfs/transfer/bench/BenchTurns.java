/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer.bench;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;

/**
 * Two benchmark processes (stock and hpc) running at the same time take turns through a file
 * holding the number of turns taken by both: the one at {@code position} 0 takes its k-th turn
 * at 2k, the other at 2k+1, and each writes the next number when its turn is done. A turn is
 * one file written, or one round's reads and preads, so the two variants alternate every few
 * tens of milliseconds, each in a JVM of its own: a stretch of the machine running slow
 * (measured here: rounds at 3-4x the CPU per byte written, on either side; per-round turns
 * still left pairs of adjacent rounds 0.34-2.41x apart) falls on both variants' files alike.
 */
final class BenchTurns {
  /** The most a process waits for the other's turn (a warm-up round's reads included). */
  private static final long WAIT_NANOS = TimeUnit.MINUTES.toNanos(10);

  private final File file;
  private final int position;
  private int taken;

  /** {@code spec}: FILE,POSITION (0: this process goes first). */
  BenchTurns(String spec) {
    int comma = spec.lastIndexOf(',');
    if (comma < 1 || !(spec.endsWith(",0") || spec.endsWith(",1"))) {
      throw new IllegalArgumentException("--turns takes FILE,0 or FILE,1, not " + spec);
    }
    this.file = new File(spec.substring(0, comma));
    this.position = spec.charAt(spec.length() - 1) - '0';
  }

  /** Waits until it is this process's next turn. */
  void await() throws IOException {
    long want = 2L * taken + position;
    long deadline = System.nanoTime() + WAIT_NANOS;
    while (done() != want) {
      if (System.nanoTime() - deadline > 0) {
        throw new IOException("the other benchmark process did not take its turn within 10"
            + " minutes (" + file + " says " + done() + ", this one waits for " + want + ")");
      }
      try {
        Thread.sleep(1);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted waiting for a turn", e);
      }
    }
  }

  /** This process's turn is done: the other's turn. */
  void pass() throws IOException {
    long next = 2L * taken + position + 1;
    taken++;
    File tmp = new File(file.getPath() + "." + position);
    Files.write(tmp.toPath(), Long.toString(next).getBytes(StandardCharsets.US_ASCII));
    Files.move(tmp.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** Turns taken by both so far (0 before the file exists). */
  private long done() throws IOException {
    try {
      String s = new String(Files.readAllBytes(file.toPath()), StandardCharsets.US_ASCII).trim();
      return s.isEmpty() ? -1 : Long.parseLong(s);
    } catch (NoSuchFileException e) {
      return 0;
    }
  }
}
