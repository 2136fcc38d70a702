/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

/**
 * Configuration keys of the HHH storage modes, read by {@link HhhMode}, {@link HhhDataNodeSetup}
 * and {@link RamTierLimit}: on the DataNode by {@link HpcDataNode} (checks, tier tags, the Lustre
 * volume), on the NameNode by {@link HhhNameNodePlugin} (the root's storage policy) and by
 * {@code hdfs hhh -report}. Every key is also in {@code hpc-hhh-default.xml} in this jar, the
 * reference for users ({@code HhhConfigKeysTest} keeps the two in step); it is not a default
 * resource. HiBD's spellings have no default of their own: they are read when ours is empty.
 */
public final class HhhConfigKeys {
  private HhhConfigKeys() {
  }

  /**
   * The storage mode: {@code off} (stock HDFS), {@code hhh} (RAM disk + SSD + HDD: the first
   * replica on SSD, the rest on DISK; RAM_DISK for files and directories with the LAZY_PERSIST
   * policy), {@code hhh-m} (in-memory: every new file is LAZY_PERSIST: written to RAM_DISK and
   * persisted lazily to SSD/DISK) or {@code hhh-l} (as hhh-m, persisted to volumes on the
   * Lustre mount). Empty: HiBD's {@link #HIBD_MODE_KEY}, else off.
   */
  public static final String MODE_KEY = "dfs.hpc.hhh.mode";
  public static final String MODE_DEFAULT = "";

  /** HiBD's spelling of {@link #MODE_KEY}: {@code Default}, {@code In-Memory}, {@code Lustre}. */
  public static final String HIBD_MODE_KEY = "dfs.rdma.hhh.mode";

  /**
   * hhh-l: the directory on the Lustre mount the DataNodes persist to; each DataNode adds the
   * volume {@code [DISK]<path>/<host>-<data port>} unless its data dirs already have persistent
   * volumes there. Empty: HiBD's {@link #HIBD_LUSTRE_PATH_KEY}.
   */
  public static final String LUSTRE_PATH_KEY = "dfs.hpc.hhh.lustre.path";
  public static final String LUSTRE_PATH_DEFAULT = "";

  /** HiBD's spelling of {@link #LUSTRE_PATH_KEY}. */
  public static final String HIBD_LUSTRE_PATH_KEY = "dfs.rdma.lustre.path";

  /**
   * Whether the DataNode must refuse to start when its RAM_DISK directory is not on tmpfs or
   * ramfs (a "RAM disk" on a real disk is only slower and still volatile to HDFS).
   */
  public static final String RAM_DISK_CHECK_KEY = "dfs.hpc.hhh.ram.disk.check";
  public static final boolean RAM_DISK_CHECK_DEFAULT = true;

  /**
   * The share (0 &lt; x &lt;= 1) of the DataNode's locked memory
   * ({@code dfs.datanode.max.locked.memory}) that RAM_DISK replicas may fill; the rest stays
   * free, e.g. for centralized cache directives. Read by {@link RamTierLimit}.
   */
  public static final String RAM_USAGE_THRESHOLD_KEY = "dfs.hpc.hhh.ram.usage.threshold";
  public static final float RAM_USAGE_THRESHOLD_DEFAULT = 1.0f;

  /**
   * What a DataNode does with a new block when its RAM_DISK replicas reach
   * {@link #RAM_USAGE_THRESHOLD_KEY}: {@code evict} (stock HDFS's behaviour: drop the in-memory
   * copies of replicas already persisted to make room; write to SSD/DISK when none is) or
   * {@code fallback} (never evict: write new blocks to SSD/DISK until memory frees up).
   */
  public static final String RAM_FULL_ACTION_KEY = "dfs.hpc.hhh.ram.full.action";
  public static final String RAM_FULL_ACTION_DEFAULT = "evict";
}
