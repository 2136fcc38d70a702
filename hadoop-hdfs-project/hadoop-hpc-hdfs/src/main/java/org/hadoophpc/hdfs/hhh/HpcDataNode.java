/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.hdfs.DFSUtil;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.HpcDataNodeBridge;
import org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.HhhFsDatasetBridge;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.apache.hadoop.util.ExitUtil;
import org.apache.hadoop.util.StringUtils;
import org.hadoophpc.hdfs.transfer.PrivilegedPortCheck;
import org.hadoophpc.nativeio.HpcCacheManipulator;
import org.hadoophpc.nativeio.HpcNative;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The DataNode of the tarball ({@code bin/hdfs datanode}): stock's DataNode, started after
 * {@link #prepare} has installed memory locking through libhpcnative and checked and applied
 * the HHH mode. A misconfigured mode, or a secure set-up the transfer plugin would weaken, stops
 * it before it starts, with one line naming the keys.
 */
public final class HpcDataNode {
  private static final Logger LOG = LoggerFactory.getLogger(HpcDataNode.class);
  private static final String USAGE = "Usage: hdfs datanode [-regular | -rollback"
      + " | -rollingupgrade rollback]";

  private HpcDataNode() {
  }

  /**
   * Refuses a secure set-up the transfer plugin would weaken ({@link PrivilegedPortCheck}),
   * installs {@link HpcCacheManipulator} and applies the HHH mode to {@code conf} (which the
   * DataNode must then be created with); MiniDFSCluster tests call it the same way.
   *
   * @throws IllegalArgumentException naming the key of a misconfigured mode or set-up
   */
  public static HhhDataNodeSetup prepare(Configuration conf) {
    PrivilegedPortCheck.checkDataNode(conf);
    HpcCacheManipulator.Installed installed = HpcCacheManipulator.install();
    boolean canLock = installed != HpcCacheManipulator.Installed.NONE;
    long limit = canLock ? NativeIO.POSIX.getCacheManipulator().getMemlockLimit() : 0;
    String whyNot = canLock ? "" : "libhpcnative is not loaded ("
        + HpcNative.unavailabilityCause().getMessage() + ")";
    HhhDataNodeSetup setup = HhhDataNodeSetup.apply(conf, limit, canLock, whyNot);
    setup.makeRamDirsPrivate();
    if (!setup.ramDirs().isEmpty()) {
      String key = DFSConfigKeys.DFS_DATANODE_FSDATASET_FACTORY_KEY;
      String configured = conf.getTrimmed(key, "");
      if (configured.isEmpty()) {
        conf.set(key, HhhFsDatasetBridge.Factory.class.getName());
      } else if (!configured.equals(HhhFsDatasetBridge.Factory.class.getName())) {
        LOG.warn("{}={} is kept: RAM_DISK replicas of an odd length may be unreadable until"
            + " persisted (see RamDiskChecksums)", key, configured);
      }
    }
    LOG.info("hadoop-hpc DataNode: HHH mode {}, memory locking by {} (limit {}){}{}",
        setup.mode(), installed, limit == Long.MAX_VALUE ? "none" : limit + " bytes",
        setup.ramDirs().isEmpty() ? "" : ", RAM_DISK " + setup.ramDirs(),
        setup.notes().isEmpty() ? "" : "; " + String.join("; ", setup.notes()));
    return setup;
  }

  public static void main(String[] args) {
    if (DFSUtil.parseHelpArgument(args, USAGE, System.out, true)) {
      System.exit(0);
    }
    int exit = 0;
    try {
      StringUtils.startupShutdownMessage(DataNode.class, args, LOG);
      Configuration conf = new HdfsConfiguration();
      try {
        prepare(conf);
      } catch (IllegalArgumentException e) {
        LOG.error("DataNode not started: {}", e.getMessage());
        System.err.println("datanode: " + e.getMessage());
        ExitUtil.terminate(1, e.getMessage());
      }
      DataNode dn = DataNode.createDataNode(args, conf);
      if (dn == null) {
        exit = 1;
      } else {
        HpcDataNodeBridge.join(dn);
      }
    } catch (Throwable t) {
      LOG.error("DataNode failed", t);
      ExitUtil.terminate(1, t);
    } finally {
      LOG.warn("Exiting DataNode");
      ExitUtil.terminate(exit);
    }
  }
}
