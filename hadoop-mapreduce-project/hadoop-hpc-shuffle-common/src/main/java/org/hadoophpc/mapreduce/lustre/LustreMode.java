/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.lustre;

import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;

/**
 * How MapReduce uses a Lustre mount ({@code mapreduce.hpc.lustre.mode}, or HiBD's
 * {@code mapred.rdma.shuffle.lustre} = 1 | 2).
 */
public enum LustreMode {
  /** No Lustre-specific behaviour. */
  OFF("off"),
  /** Input and output on Lustre; intermediate data on node-local disks, shuffled as configured. */
  LOCAL_DISKS("local-disks"),
  /** Intermediate data on Lustre; reducers read map outputs straight from it. */
  NO_LOCAL_DISKS("no-local-disks");

  private final String value;

  LustreMode(String value) {
    this.value = value;
  }

  /** The key's spelling of this mode. */
  public String value() {
    return value;
  }

  /** The mode {@code conf} asks for; a bad value throws naming the key and the valid values. */
  public static LustreMode from(Configuration conf) {
    String ours = conf.getTrimmed(ShuffleConfigKeys.LUSTRE_MODE_KEY,
        ShuffleConfigKeys.LUSTRE_MODE_DEFAULT);
    String hibd = conf.getTrimmed(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY); // no default: unset
    if (ours.isEmpty() && hibd != null && !hibd.isEmpty()) {
      switch (hibd) {
        case "0":
          return OFF;
        case "1":
          return LOCAL_DISKS;
        case "2":
          return NO_LOCAL_DISKS;
        default:
          throw new IllegalArgumentException(ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY + "=" + hibd
              + " is not a mode: 1 = MapReduce over Lustre with local disks, 2 = without (or set "
              + ShuffleConfigKeys.LUSTRE_MODE_KEY + ")");
      }
    }
    String v = ours.isEmpty() ? OFF.value : ours.toLowerCase(Locale.ROOT);
    for (LustreMode m : values()) {
      if (m.value.equals(v)) {
        return m;
      }
    }
    throw new IllegalArgumentException(ShuffleConfigKeys.LUSTRE_MODE_KEY + "=" + ours
        + " is not a mode: use off, local-disks or no-local-disks");
  }
}
