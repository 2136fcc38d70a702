/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle.protocol;

import java.util.Arrays;
import java.util.List;

/**
 * The byte stream of one fetch session, the same rule on both sides: the partitions of the
 * session's servable maps (status OK), one after the other in the open request's order. A read
 * names the map its first byte belongs to and the offset in that map's partition, and may run
 * on into the following maps' partitions: one request for the whole of many small partitions.
 * Immutable.
 */
public final class SessionLayout {
  /** Stream offset of each map's partition; -1 for a map not in the stream. */
  private final long[] starts;
  private final long[] lengths;
  private final long total;
  /** The served maps with at least one byte, in order, and their stream offsets. */
  private final int[] withBytes;
  private final long[] withBytesStarts;

  /** {@code lengths[i]}: the partition's bytes, or a negative number for a map not served. */
  public SessionLayout(long[] lengths) {
    this.lengths = lengths.clone();
    this.starts = new long[lengths.length];
    long at = 0;
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] < 0) {
        starts[i] = -1;
        continue;
      }
      starts[i] = at;
      at = Math.addExact(at, lengths[i]);
    }
    this.total = at;
    int n = 0;
    for (int i = 0; i < lengths.length; i++) {
      n += lengths[i] > 0 ? 1 : 0;
    }
    withBytes = new int[n];
    withBytesStarts = new long[n];
    n = 0;
    for (int i = 0; i < lengths.length; i++) {
      if (lengths[i] > 0) {
        withBytes[n] = i;
        withBytesStarts[n++] = starts[i];
      }
    }
  }

  /** The stream of the partitions an open answered; maps whose status is not OK are left out. */
  public static SessionLayout of(List<OpenResponse.Partition> partitions) {
    long[] l = new long[partitions.size()];
    for (int i = 0; i < l.length; i++) {
      OpenResponse.Partition p = partitions.get(i);
      l[i] = p.status() == OpenResponse.Status.OK ? p.partLength() : -1;
    }
    return new SessionLayout(l);
  }

  /** The same session's stream with map {@code i}'s partition alone (it must be served). */
  public SessionLayout only(int i) {
    long[] l = new long[lengths.length];
    Arrays.fill(l, -1);
    l[i] = lengths[i];
    return new SessionLayout(l);
  }

  public int maps() {
    return lengths.length;
  }

  /** All bytes of the stream. */
  public long total() {
    return total;
  }

  /** True when map {@code i} is in the stream. */
  public boolean served(int i) {
    return i >= 0 && i < starts.length && starts[i] >= 0;
  }

  /** Stream offset of map {@code i}'s first byte (it must be served). */
  public long start(int i) {
    return starts[i];
  }

  /** Bytes of map {@code i}'s partition (it must be served). */
  public long length(int i) {
    return lengths[i];
  }

  /**
   * The stream offset of a read of {@code length} bytes at {@code offset} of map {@code map}'s
   * partition, or -1 when that read is not inside the stream (the map is not served, the
   * offset is past its partition, or the bytes run past the stream's end).
   */
  public long position(int map, long offset, int length) {
    if (!served(map) || offset < 0 || length <= 0 || offset >= lengths[map]) {
      return -1;
    }
    long at = starts[map] + offset;
    return length > total - at ? -1 : at;
  }

  /** The served map holding stream byte {@code position} ({@code 0 <= position < total}). */
  public int mapAt(long position) {
    if (position < 0 || position >= total) {
      throw new IllegalArgumentException("byte " + position + " of a stream of " + total);
    }
    // withBytes' starts strictly increase: the last one at or before position holds it
    int k = Arrays.binarySearch(withBytesStarts, position);
    return withBytes[k >= 0 ? k : -k - 2];
  }

  /** The read of at most {@code chunk} bytes at stream byte {@code position}. */
  public ReadSpan spanAt(long position, int chunk) {
    int map = mapAt(position);
    int length = (int) Math.min(chunk, total - position);
    return new ReadSpan(map, position - starts[map], length);
  }

  /** A read as the wire names it. */
  public record ReadSpan(int map, long offset, int length) {
  }

  @Override
  public String toString() {
    return "SessionLayout" + Arrays.toString(lengths) + " total=" + total;
  }
}
