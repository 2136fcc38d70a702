/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: DataNode.join(), which waits until a DataNode has
// stopped serving every block pool, is package-private, and hadoop-hpc's DataNode entry point
// (org.hadoophpc.hdfs.hhh.HpcDataNode) must create the DataNode itself to hand it the
// configuration its HHH mode prepared. This is the only class hadoop-hpc puts in
// org.apache.hadoop.hdfs.server.datanode; HhhModesIT covers it.
package org.apache.hadoop.hdfs.server.datanode;

/** Waits for a DataNode to stop. */
public final class HpcDataNodeBridge {
  private HpcDataNodeBridge() {
  }

  /** Returns once {@code dn} has shut down (all its block pool services ended). */
  public static void join(DataNode dn) {
    dn.join();
  }
}
