/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;

import org.apache.hadoop.mapred.IndexRecord;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;

/**
 * A reducer's open fetch on the service: the job, the reduce partition and, per requested map,
 * the open data file and index record, plus the pre-fetched first chunk when there is one.
 * Bound to the connection that opened it.
 */
final class ServedSession {

  /** One requested map: served when {@link #partition} is OK. */
  static final class Entry {
    final OpenResponse.Partition partition;
    final FileChannel channel;
    final IndexRecord index;
    private CompletableFuture<Buffer> head;
    private int headLength;

    Entry(OpenResponse.Partition partition, FileChannel channel, IndexRecord index) {
      this.partition = partition;
      this.channel = channel;
      this.index = index;
    }

    synchronized void setHead(CompletableFuture<Buffer> f, int length) {
      head = f;
      headLength = length;
    }

    /**
     * The pre-fetched chunk if it is exactly {@code [offset, offset + length)}; any other head is
     * dropped and its length passed to {@code dropped} once it completes (a null value means the
     * pre-fetch did not happen).
     */
    synchronized CompletableFuture<Buffer> takeHead(long offset, int length, IntConsumer dropped) {
      CompletableFuture<Buffer> f = head;
      head = null;
      if (f == null) {
        return null;
      }
      if (offset == 0 && length == headLength) {
        return f;
      }
      drop(f, headLength, dropped);
      return null;
    }

    synchronized void close(IntConsumer dropped) {
      if (head != null) {
        drop(head, headLength, dropped);
        head = null;
      }
      if (channel != null) {
        try {
          channel.close();
        } catch (IOException e) {
          // read-only file: nothing to lose
        }
      }
    }

    private static void drop(CompletableFuture<Buffer> f, int length, IntConsumer dropped) {
      f.whenComplete((b, e) -> {
        if (b != null) {
          b.release();
        }
        dropped.accept(length);
      });
    }
  }

  final long id;
  final Connection connection;
  final JobRegistry.Job job;
  final int reduce;
  final Entry[] entries;

  ServedSession(long id, Connection connection, JobRegistry.Job job, int reduce,
      Entry[] entries) {
    this.id = id;
    this.connection = connection;
    this.job = job;
    this.reduce = reduce;
    this.entries = entries;
  }
}
