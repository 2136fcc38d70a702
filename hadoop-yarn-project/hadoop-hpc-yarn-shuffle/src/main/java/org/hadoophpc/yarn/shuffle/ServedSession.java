/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.nio.channels.FileChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.IntConsumer;

import org.apache.hadoop.mapred.IndexRecord;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.SessionLayout;
import org.hadoophpc.mapreduce.shuffle.protocol.SessionLayout.ReadSpan;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;

/**
 * A reducer's open fetch on the service: the job, the reduce partition, per requested map the
 * open data file and index record, the session's byte stream ({@link SessionLayout}) and, where
 * chunks are copied, its first read read ahead at the open. Bound to the connection that opened
 * it.
 */
final class ServedSession {

  /**
   * One requested map: served when {@link #partition} is OK, from {@link #channel}, the map
   * output's file that the sessions reading it share ({@link OpenBudget}).
   */
  static final class Entry {
    final OpenResponse.Partition partition;
    final FileChannel channel;
    final IndexRecord index;
    private final OpenBudget.SharedFile file;
    private boolean closed;

    Entry(OpenResponse.Partition partition, OpenBudget.SharedFile file, IndexRecord index) {
      this.partition = partition;
      this.file = file;
      this.channel = file == null ? null : file.channel();
      this.index = index;
    }

    /** A map the service cannot serve ({@code partition} says why). */
    static Entry failed(OpenResponse.Partition partition) {
      return new Entry(partition, null, null);
    }

    /** Lets go of the file (once; the session's owner calls it). */
    void close() {
      if (file != null && !closed) {
        closed = true;
        file.release();
      }
    }
  }

  /** {@code length} bytes of {@code entry}'s partition from {@code offset}: part of a read. */
  record Piece(Entry entry, long offset, int length) {
    /** Where the bytes are in the map-output file. */
    long filePosition() {
      return entry.index.startOffset + offset;
    }
  }

  final long id;
  final Connection connection;
  final JobRegistry.Job job;
  final int reduce;
  final Entry[] entries;
  final SessionLayout layout;
  /** The reducer's read size (its open said so): what the read-ahead reads. */
  final int chunk;
  private CompletableFuture<Buffer> ahead;
  private ReadSpan aheadSpan;
  private boolean closed;

  ServedSession(long id, Connection connection, JobRegistry.Job job, int reduce,
      Entry[] entries, int chunk) {
    this.id = id;
    this.connection = connection;
    this.job = job;
    this.reduce = reduce;
    this.entries = entries;
    this.chunk = chunk;
    long[] lengths = new long[entries.length];
    for (int i = 0; i < entries.length; i++) {
      lengths[i] = entries[i].channel == null ? -1 : entries[i].index.partLength;
    }
    this.layout = new SessionLayout(lengths);
  }

  /** The pieces of {@code r}, which must lie inside the stream ({@link SessionLayout#position}). */
  List<Piece> pieces(ReadSpan r) {
    List<Piece> out = new ArrayList<>(2);
    int map = r.map();
    long offset = r.offset();
    long left = r.length();
    while (left > 0) {
      if (layout.served(map)) {
        int n = (int) Math.min(left, layout.length(map) - offset);
        if (n > 0) {
          out.add(new Piece(entries[map], offset, n));
          left -= n;
        }
      }
      map++;
      offset = 0;
    }
    return out;
  }

  /** The first read of the stream at {@code chunk}, or null for an empty stream. */
  ReadSpan first() {
    return layout.total() == 0 ? null : layout.spanAt(0, chunk);
  }

  /**
   * Keeps {@code f}, the read of {@code span} under way, for the read that asks for exactly
   * that span; false (keeping nothing) when the session is closed or already holds one.
   */
  synchronized boolean offerAhead(ReadSpan span, CompletableFuture<Buffer> f) {
    if (closed || ahead != null) {
      return false;
    }
    ahead = f;
    aheadSpan = span;
    return true;
  }

  /**
   * The read-ahead if it is exactly {@code span}, else null and the read-ahead stays for its own
   * read: with several reads in flight a later read can arrive first (seen over verbs); close
   * drops one never asked for.
   */
  synchronized CompletableFuture<Buffer> takeAhead(ReadSpan span) {
    if (ahead == null || !aheadSpan.equals(span)) {
      return null;
    }
    CompletableFuture<Buffer> f = ahead;
    ahead = null;
    aheadSpan = null;
    return f;
  }

  /** Drops the read-ahead (the owner lets go of the files, see {@code SessionAdmission}). */
  void close(IntConsumer dropped) {
    synchronized (this) {
      closed = true;
      if (ahead != null) {
        drop(ahead, aheadSpan.length(), dropped);
        ahead = null;
        aheadSpan = null;
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
