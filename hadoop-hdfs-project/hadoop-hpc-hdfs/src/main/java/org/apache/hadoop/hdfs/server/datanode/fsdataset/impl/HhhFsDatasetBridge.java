/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: FsDatasetImpl, the DataNode's dataset, is
// package-private and its lazy-persist workers cast the DataNode's dataset to it, so the one
// thing the in-memory modes add (checksums for RAM_DISK replicas when they are finalized, see
// org.hadoophpc.hdfs.hhh.RamDiskChecksums) must be a subclass here. This is the only class
// hadoop-hpc puts in org.apache.hadoop.hdfs.server.datanode.fsdataset.impl; HhhModesIT covers
// it (an odd-length file read back from RAM_DISK).
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

/** Stock's dataset, plus checksums for RAM_DISK replicas as they are finalized. */
public final class HhhFsDatasetBridge extends FsDatasetImpl {

  HhhFsDatasetBridge(DataNode datanode, DataStorage storage, Configuration conf)
      throws IOException {
    super(datanode, storage, conf);
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
