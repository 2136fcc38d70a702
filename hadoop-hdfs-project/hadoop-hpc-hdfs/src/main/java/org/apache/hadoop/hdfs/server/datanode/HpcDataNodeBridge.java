/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: hadoop-hpc needs three package-private things of the
// DataNode. DataNode.join(), which waits until a DataNode has stopped serving every block pool
// (hadoop-hpc's DataNode entry point org.hadoophpc.hdfs.hhh.HpcDataNode creates the DataNode
// itself to hand it the configuration its HHH mode prepared); and, for HDFS DataTransfer over
// the hpc transport, the private DataXceiverServer.peerServer of the package-private
// DataXceiverServer (the stock server then accepts transport streams too) and the private
// DataNode.socketFactory, read only by DataNode.newSocket() (pipeline mirrors,
// re-replication, replaceBlock proxies). This is the only class hadoop-hpc puts in
// org.apache.hadoop.hdfs.server.datanode; HhhModesIT and TransferSmokeIT cover it.
package org.apache.hadoop.hdfs.server.datanode;

import java.lang.reflect.Field;

import java.lang.invoke.VarHandle;
import java.util.function.UnaryOperator;

import javax.net.SocketFactory;

import org.apache.hadoop.hdfs.net.PeerServer;

/** Reaches package-private parts of the DataNode. */
public final class HpcDataNodeBridge {
  private HpcDataNodeBridge() {
  }

  /** Returns once {@code dn} has shut down (all its block pool services ended). */
  public static void join(DataNode dn) {
    dn.join();
  }

  /**
   * Replaces the stock {@code DataXceiverServer}'s PeerServer with {@code wrap(stock)}, so one
   * stock server (its xceiver count and limit, OOB acks before a restart, evictWriters,
   * reconfiguration, balancer throttling) serves streams from both. The server reads the
   * field at each accept: the new one is used from the next accepted connection on. False when
   * this Hadoop has no such field (nothing changed).
   */
  public static boolean interposePeerServer(DataNode dn, UnaryOperator<PeerServer> wrap) {
    DataXceiverServer xs = dn.getXferServer();
    if (xs == null) {
      return false;
    }
    try {
      Field f = DataXceiverServer.class.getDeclaredField("peerServer");
      f.setAccessible(true);
      f.set(xs, wrap.apply((PeerServer) f.get(xs)));
      VarHandle.fullFence();
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return false;
    }
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
