/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: FsDatasetImpl, the DataNode's dataset, is
// package-private and its lazy-persist workers cast the DataNode's dataset to it, so the two
// things the in-memory modes add must be a subclass here: checksums for RAM_DISK replicas when
// they are finalized (see org.hadoophpc.hdfs.hhh.RamDiskChecksums), and a limit on the locked
// memory they may fill (org.hadoophpc.hdfs.hhh.RamTierLimit), which needs the package-private
// reserveLockedMemory and cacheManager. This is the only class hadoop-hpc puts in
// org.apache.hadoop.hdfs.server.datanode.fsdataset.impl; HhhModesIT covers both (an odd-length
// file read back from RAM_DISK; a RAM tier full at its threshold, evicting or falling back).
package org.apache.hadoop.hdfs.server.datanode.fsdataset.impl;

import java.io.File;
import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.protocol.BlockLocalPathInfo;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.DataStorage;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.FsDatasetSpi;
import org.hadoophpc.hdfs.hhh.RamDiskChecksums;
import org.hadoophpc.hdfs.hhh.RamTierLimit;

/**
 * Stock's dataset, plus checksums for RAM_DISK replicas as they are finalized and a usage limit
 * for the RAM tier.
 */
public final class HhhFsDatasetBridge extends FsDatasetImpl {
  private final RamTierLimit ramLimit;

  HhhFsDatasetBridge(DataNode datanode, DataStorage storage, Configuration conf)
      throws IOException {
    super(datanode, storage, conf);
    this.ramLimit = RamTierLimit.from(conf);
  }

  /**
   * Reserves locked memory for a new RAM_DISK block only while RAM_DISK replicas stay within
   * the configured share of it; beyond it, evicts persisted replicas or (fallback, or nothing
   * to evict) returns false, and the block goes to a persistent volume as in stock HDFS.
   */
  @Override
  boolean reserveLockedMemory(long bytesNeeded) {
    if (ramLimit.isStock()) {
      return super.reserveLockedMemory(bytesNeeded);
    }
    long needed = cacheManager.roundUpPageSize(bytesNeeded);
    long capacity = cacheManager.getMemCacheCapacity();
    long limit = ramLimit.limit(capacity);
    if (cacheManager.getMemCacheUsed() + needed > limit) {
      if (!ramLimit.evicts()) {
        return false;
      }
      // Stock evicts until capacity - used >= its argument, i.e. until used + needed <= limit.
      // Not under our lock: eviction takes the dataset's block-pool and volume locks.
      evictLazyPersistBlocks(needed + capacity - limit);
    }
    synchronized (ramLimit) { // check-then-reserve, one writer at a time; no other lock inside
      if (cacheManager.getMemCacheUsed() + needed > limit) {
        return false;
      }
      return cacheManager.reserve(needed) > 0;
    }
  }

  @Override
  public void finalizeBlock(ExtendedBlock b, boolean fsyncDir) throws IOException {
    super.finalizeBlock(b, fsyncDir);
    FsVolumeImpl volume = getVolume(b);
    if (volume != null && volume.isTransientStorage()) {
      BlockLocalPathInfo paths = getBlockLocalPathInfo(b);
      RamDiskChecksums.writeChecksums(new File(paths.getBlockPath()),
          new File(paths.getMetaPath()));
    }
  }

  /** {@code dfs.datanode.fsdataset.factory} for this dataset. */
  public static final class Factory extends FsDatasetSpi.Factory<FsDatasetImpl> {
    @Override
    public FsDatasetImpl newInstance(DataNode datanode, DataStorage storage, Configuration conf)
        throws IOException {
      return new HhhFsDatasetBridge(datanode, storage, conf);
    }
  }
}
