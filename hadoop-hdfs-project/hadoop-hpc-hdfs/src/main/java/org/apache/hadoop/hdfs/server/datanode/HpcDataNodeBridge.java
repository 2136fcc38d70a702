/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: hadoop-hpc needs four package-private things of the
// DataNode. DataNode.join(), which waits until a DataNode has stopped serving every block pool
// (hadoop-hpc's DataNode entry point org.hadoophpc.hdfs.hhh.HpcDataNode creates the DataNode
// itself to hand it the configuration its HHH mode prepared); and, for HDFS DataTransfer over
// the hpc transport, the DataXceiverServer class and constructor (a second stock server over
// our PeerServer), DataNode.threadGroup (its xceivers run and are interrupted with the stock
// ones) and the private DataNode.socketFactory, read only by DataNode.newSocket() (pipeline
// mirrors, re-replication, replaceBlock proxies). This is the only class hadoop-hpc puts in
// org.apache.hadoop.hdfs.server.datanode; HhhModesIT and TransferSmokeIT cover it.
package org.apache.hadoop.hdfs.server.datanode;

import java.lang.reflect.Field;

import javax.net.SocketFactory;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.net.PeerServer;
import org.apache.hadoop.util.Daemon;

/** Reaches package-private parts of the DataNode. */
public final class HpcDataNodeBridge {
  private HpcDataNodeBridge() {
  }

  /** Returns once {@code dn} has shut down (all its block pool services ended). */
  public static void join(DataNode dn) {
    dn.join();
  }

  /**
   * A stock {@code DataXceiverServer} over {@code peers}, sharing the stock server's throttlers
   * (so configured bandwidth limits hold for both), as a Runnable: its accept loop.
   */
  public static Runnable newXceiverServer(PeerServer peers, Configuration conf, DataNode dn) {
    DataXceiverServer ours = new DataXceiverServer(peers, conf, dn);
    DataXceiverServer stock = dn.getXferServer();
    if (stock != null) {
      ours.setTransferThrottler(stock.getTransferThrottler());
      ours.setWriteThrottler(stock.getWriteThrottler());
      ours.setReadThrottler(stock.getReadThrottler());
    }
    return ours;
  }

  /** Starts {@code r} as a daemon in the DataNode's xceiver thread group. */
  public static Thread startXceiverDaemon(DataNode dn, Runnable r) {
    Daemon d = new Daemon(dn.threadGroup, r);
    d.setName("hpc transfer xceiver server " + dn.getXferAddress());
    d.start();
    return d;
  }

  /** Whether the DataNode still runs (its accept loops keep going while true). */
  public static boolean shouldRun(DataNode dn) {
    return dn.shouldRun;
  }

  /**
   * Makes {@code factory} the one {@code DataNode.newSocket()} uses; the factory it replaced,
   * or null when this Hadoop has no such field (then nothing changed).
   */
  public static SocketFactory setTransferSocketFactory(DataNode dn, SocketFactory factory) {
    try {
      Field f = DataNode.class.getDeclaredField("socketFactory");
      f.setAccessible(true);
      SocketFactory old = (SocketFactory) f.get(dn);
      f.set(dn, factory);
      return old;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
