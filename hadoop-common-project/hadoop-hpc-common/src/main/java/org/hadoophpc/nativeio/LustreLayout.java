/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.util.Arrays;

/**
 * A Lustre file's RAID0 layout as liblustreapi reports it: stripe size S, stripe count C and
 * the OST index of each stripe object. Byte {@code b} of the file lives in stripe
 * {@code (b / S) % C}. Immutable; from {@link LustreApi#layout(String)}.
 */
public final class LustreLayout {
  private final long stripeSize;
  private final int stripeCount;
  private final long[] osts;

  /**
   * @param stripeSize  bytes per stripe; 0 when liblustreapi reported no value
   * @param stripeCount stripes; 0 when unknown
   * @param osts        the OST of stripe 0, 1, ...: may be shorter than {@code stripeCount}
   *                    (a directory, objects not yet allocated) and then locality is unknown
   */
  public LustreLayout(long stripeSize, int stripeCount, long[] osts) {
    if (stripeSize < 0 || stripeCount < 0) {
      throw new IllegalArgumentException("stripe size " + stripeSize + ", count " + stripeCount);
    }
    this.stripeSize = stripeSize;
    this.stripeCount = stripeCount;
    this.osts = osts.clone();
  }

  static LustreLayout fromNative(long[] values) {
    return new LustreLayout(values[0], (int) Math.min(Integer.MAX_VALUE, values[1]),
        Arrays.copyOfRange(values, 2, values.length));
  }

  public long stripeSize() {
    return stripeSize;
  }

  public int stripeCount() {
    return stripeCount;
  }

  /** True when every stripe's OST is known, so byte ranges map to OSTs. */
  public boolean ostsKnown() {
    return stripeSize > 0 && stripeCount > 0 && osts.length >= stripeCount;
  }

  /** The OST of stripe {@code stripe} (0 .. stripeCount - 1); requires {@link #ostsKnown()}. */
  public long ost(int stripe) {
    return osts[stripe];
  }

  /**
   * Bytes of {@code [start, start + length)} stored on each stripe object: element {@code k}
   * is stripe {@code k}'s share. Requires {@link #ostsKnown()}.
   */
  public long[] bytesPerStripe(long start, long length) {
    if (!ostsKnown()) {
      throw new IllegalStateException("OSTs unknown: " + this);
    }
    long[] bytes = new long[stripeCount];
    long end = start + length;
    for (long at = start; at < end; ) {
      long unit = at / stripeSize;
      long unitEnd = Math.min(end, (unit + 1) * stripeSize);
      bytes[(int) (unit % stripeCount)] += unitEnd - at;
      at = unitEnd;
    }
    return bytes;
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof LustreLayout)) {
      return false;
    }
    LustreLayout other = (LustreLayout) o;
    return stripeSize == other.stripeSize && stripeCount == other.stripeCount
        && Arrays.equals(osts, other.osts);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * Long.hashCode(stripeSize) + stripeCount) + Arrays.hashCode(osts);
  }

  @Override
  public String toString() {
    return "stripe size " + stripeSize + ", count " + stripeCount + ", OSTs "
        + Arrays.toString(osts);
  }
}
