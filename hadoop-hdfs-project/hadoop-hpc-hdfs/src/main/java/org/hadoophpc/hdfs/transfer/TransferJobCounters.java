/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import org.apache.hadoop.fs.FileSystem;

/**
 * HDFS DataTransfer over the transport as a job sees it: the stream bytes this process's HDFS
 * clients read from and wrote to DataNodes over the transport, kept as a
 * {@link FileSystem.Statistics} of the scheme {@value #SCHEME}. A MapReduce task turns every
 * statistics object of its JVM into the job's File System Counters (stock's
 * {@code Task.updateCounters} reads {@link FileSystem#getAllStatistics()}), so a job that moved
 * HDFS blocks over the transport shows {@code HDFS-TRANSPORT: Number of bytes read} and
 * {@code ... written} next to stock's {@code HDFS:} lines (counter names
 * {@code HDFS-TRANSPORT_BYTES_READ} and {@code HDFS-TRANSPORT_BYTES_WRITTEN} of the group
 * {@code org.apache.hadoop.mapreduce.FileSystemCounter}); a job that used plain TCP has none.
 *
 * <p>Hadoop's only public way to add such an object is {@link FileSystem#getStatistics(String,
 * Class)}, which files it under a {@code FileSystem} class: {@link Key} is that key and nothing
 * else (never instantiated, never registered as a file system). The object is created on the
 * first byte, so processes that never use the transport carry no such counters.
 */
final class TransferJobCounters {
  /** The scheme of the counters (upper-cased by MapReduce: {@code HDFS-TRANSPORT}). */
  static final String SCHEME = "hdfs-transport";

  private static volatile FileSystem.Statistics statistics;

  private TransferJobCounters() {
  }

  static void read(long bytes) {
    statistics().incrementBytesRead(bytes);
  }

  static void written(long bytes) {
    statistics().incrementBytesWritten(bytes);
  }

  @SuppressWarnings("deprecation") // the only public way in; Task.updateCounters still reads it
  private static FileSystem.Statistics statistics() {
    FileSystem.Statistics s = statistics;
    if (s == null) {
      s = FileSystem.getStatistics(SCHEME, Key.class); // synchronized, returns the one object
      statistics = s;
    }
    return s;
  }

  /** The class Hadoop files the statistics under; see the class comment. */
  private abstract static class Key extends FileSystem {
  }
}
