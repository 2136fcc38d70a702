/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.util.DiskChecker;
import org.apache.hadoop.yarn.server.api.AuxiliaryLocalPathHandler;

/**
 * Finds a map attempt's output where stock map tasks leave it, in the NodeManager's local dirs:
 * {@code usercache/<user>/appcache/<appId>/output/<attempt>/file.out} and its
 * {@code file.out.index}. Index files are read with Hadoop's {@link SpillRecord} (which checks
 * their checksum) and kept in a cache bounded by {@code mapreduce.reduce.shuffle.indexcache.mb},
 * stock's key for the same cache. Thread-safe.
 */
final class MapOutputLocator {
  static final String DATA_FILE = "file.out";
  static final String INDEX_FILE = "file.out.index";
  private static final String INDEX_CACHE_MB_KEY = "mapreduce.reduce.shuffle.indexcache.mb";
  private static final int INDEX_CACHE_MB_DEFAULT = 10;
  private static final int INDEX_RECORD_BYTES = 24;

  /** A partition on disk. */
  record Located(Path data, IndexRecord index) {
  }

  private record Cached(Path data, SpillRecord spill) {
  }

  private final AuxiliaryLocalPathHandler dirs;
  private final JobConf conf;
  private final long maxIndexBytes;
  private long indexBytes;
  private final LinkedHashMap<String, Cached> cache = new LinkedHashMap<>(64, 0.75f, true);

  MapOutputLocator(AuxiliaryLocalPathHandler dirs, JobConf conf) {
    this.dirs = dirs;
    this.conf = conf;
    this.maxIndexBytes = (long) conf.getInt(INDEX_CACHE_MB_KEY, INDEX_CACHE_MB_DEFAULT) << 20;
  }

  /**
   * The partition {@code reduce} of {@code attempt}'s output.
   *
   * @throws DiskChecker.DiskErrorException the output is in none of the local dirs
   * @throws IOException                    the index is unreadable or corrupt
   */
  Located locate(JobRegistry.Job job, String attempt, int reduce) throws IOException {
    String key = job.jobId() + "/" + attempt;
    Cached c;
    synchronized (this) {
      c = cache.get(key);
    }
    if (c == null) {
      String base = "usercache/" + job.user() + "/appcache/" + job.appId() + "/output/" + attempt
          + "/";
      Path index = dirs.getLocalPathForRead(base + INDEX_FILE);
      Path data = dirs.getLocalPathForRead(base + DATA_FILE);
      c = new Cached(data, new SpillRecord(index, conf, job.user()));
      synchronized (this) {
        if (cache.put(key, c) == null) {
          indexBytes += bytes(c);
        }
        Iterator<Map.Entry<String, Cached>> it = cache.entrySet().iterator();
        while (indexBytes > maxIndexBytes && it.hasNext()) {
          Map.Entry<String, Cached> e = it.next();
          if (e.getKey().equals(key)) {
            continue;
          }
          indexBytes -= bytes(e.getValue());
          it.remove();
        }
      }
    }
    if (reduce >= c.spill().size()) {
      throw new IOException(attempt + " has " + c.spill().size() + " partitions; reduce "
          + reduce + " does not exist");
    }
    return new Located(c.data(), c.spill().getIndex(reduce));
  }

  /** Drops the cached indexes of {@code jobId}. */
  synchronized void forgetJob(String jobId) {
    String prefix = jobId + "/";
    Iterator<Map.Entry<String, Cached>> it = cache.entrySet().iterator();
    while (it.hasNext()) {
      Map.Entry<String, Cached> e = it.next();
      if (e.getKey().startsWith(prefix)) {
        indexBytes -= bytes(e.getValue());
        it.remove();
      }
    }
  }

  synchronized int cachedIndexes() {
    return cache.size();
  }

  private static long bytes(Cached c) {
    return (long) c.spill().size() * INDEX_RECORD_BYTES;
  }
}
