/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import org.hadoophpc.mapreduce.shuffle.ServiceLimits;

/**
 * What the service holds open for its sessions, counted against {@link ServiceLimits}: fetch
 * sessions and map-output files, in total and per job. A check and the count it admits are one
 * step under this object's lock, so concurrent opens never pass a cap together.
 *
 * <p>Files are shared: the sessions reading the same map output of a job hold one channel (reads
 * are positional, so no session moves another's position), closed when the last one lets go.
 * A file is counted when its first holder starts to open it (outside the lock); holders that
 * come meanwhile wait for that open, so a file being opened is never counted twice. Thread-safe.
 */
final class OpenBudget {

  /** Opens a map-output file for its job's user. */
  interface Opener {
    FileChannel open() throws IOException;
  }

  /** One open map-output file and the sessions' entries that hold it. */
  final class SharedFile {
    private final Key key;
    /** Completed by the first holder's open. */
    private final CompletableFuture<FileChannel> opened = new CompletableFuture<>();
    /** Entries holding this file; guarded by the budget. */
    private int holders = 1;

    private SharedFile(Key key) {
      this.key = key;
    }

    /** The open file (once {@link #acquire} returned it). */
    FileChannel channel() {
      return opened.getNow(null);
    }

    /** One holder lets go; the last closes the file. Call once per {@link #acquire}. */
    void release() {
      OpenBudget.this.release(this);
    }
  }

  private record Key(String job, String path) {
  }

  private final ServiceLimits limits;
  private final Map<String, Integer> sessionsByJob = new HashMap<>();
  private final Map<String, Integer> filesByJob = new HashMap<>();
  private final Map<Key, SharedFile> files = new HashMap<>();
  private int sessions;
  /** Files open or reserved (being opened). */
  private int fileCount;

  OpenBudget(ServiceLimits limits) {
    this.limits = limits;
  }

  /** Counts one more session of {@code job}; false, counting nothing, at a sessions cap. */
  synchronized boolean admitSession(String job) {
    int ofJob = sessionsByJob.getOrDefault(job, 0);
    if (sessions >= limits.sessions() || ofJob >= limits.sessionsPerJob()) {
      return false;
    }
    sessions++;
    sessionsByJob.put(job, ofJob + 1);
    return true;
  }

  /** A session {@link #admitSession admitted} for {@code job} ended. */
  synchronized void sessionClosed(String job) {
    sessions--;
    count(sessionsByJob, job, -1);
  }

  /**
   * The open file {@code path} of {@code job} for one more holder, opened with {@code opener}
   * when nobody holds it; null, holding nothing, when opening it would pass a files cap.
   *
   * @throws IOException from {@code opener}
   */
  SharedFile acquire(String job, String path, Opener opener) throws IOException {
    Key key = new Key(job, path);
    SharedFile f;
    boolean first = false;
    synchronized (this) {
      f = files.get(key);
      if (f != null) {
        f.holders++;
      } else if (fileCount >= limits.files()
          || filesByJob.getOrDefault(job, 0) >= limits.filesPerJob()) {
        return null;
      } else {
        f = new SharedFile(key);
        files.put(key, f);
        fileCount++;
        count(filesByJob, job, 1);
        first = true;
      }
    }
    if (first) {
      return open(f, opener);
    }
    try {
      f.opened.join(); // its first holder's open: that thread's file-system call, no other wait
      return f;
    } catch (CompletionException e) {
      throw new IOException("cannot open " + path + ": " + e.getCause().getMessage(),
          e.getCause());
    }
  }

  /** The first holder opens {@code f}; a failed open uncounts it (its waiters fail too). */
  private SharedFile open(SharedFile f, Opener opener) throws IOException {
    try {
      f.opened.complete(opener.open());
      return f;
    } catch (IOException | RuntimeException e) {
      forget(f);
      f.opened.completeExceptionally(e);
      throw e;
    }
  }

  private synchronized boolean forget(SharedFile f) {
    if (!files.remove(f.key, f)) {
      return false;
    }
    fileCount--;
    count(filesByJob, f.key.job(), -1);
    return true;
  }

  private void release(SharedFile f) {
    synchronized (this) {
      if (--f.holders > 0 || !forget(f)) {
        return;
      }
    }
    closeQuietly(f.channel());
  }

  synchronized int sessions() {
    return sessions;
  }

  synchronized int files() {
    return fileCount;
  }

  private static void count(Map<String, Integer> byJob, String job, int delta) {
    byJob.merge(job, delta, (a, b) -> a + b == 0 ? null : a + b);
  }

  private static void closeQuietly(FileChannel ch) {
    try {
      ch.close();
    } catch (IOException e) {
      // read-only file: nothing to lose
    }
  }
}
