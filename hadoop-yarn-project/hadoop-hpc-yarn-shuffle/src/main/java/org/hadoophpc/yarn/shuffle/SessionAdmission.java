/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.io.SecureIOUtils;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.util.DiskChecker;
import org.hadoophpc.mapreduce.shuffle.ServiceLimits;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a verified open may hold: its maps (each a map attempt of its job, each once, at most
 * {@link ServiceLimits#openMaps()}), a session of its job within the sessions caps, and the
 * map-output files within the files caps ({@link OpenBudget}). Gives the session's entries, or
 * refuses the open with a typed {@link Refused} having kept nothing: a malformed open is a
 * BAD_REQUEST, a cap reached is BUSY (the reducer waits, bounded by
 * {@code mapreduce.hpc.shuffle.busy.max.retries}, then fails the fetch as stock does).
 * Thread-safe.
 */
final class SessionAdmission {
  private static final Logger LOG = LoggerFactory.getLogger(SessionAdmission.class);

  /** An open refused: the code the reducer gets, and why. */
  static final class Refused extends Exception {
    private static final long serialVersionUID = 1L;
    final ShuffleError code;

    Refused(ShuffleError code, String message) {
      super(message, null, false, false);
      this.code = code;
    }
  }

  private final ServiceLimits limits;
  private final OpenBudget budget;
  private final MapOutputLocator locator;
  private final ShuffleServiceMetrics metrics;

  SessionAdmission(ServiceLimits limits, MapOutputLocator locator,
      ShuffleServiceMetrics metrics) {
    this.limits = limits;
    this.budget = new OpenBudget(limits);
    this.locator = locator;
    this.metrics = metrics;
  }

  /**
   * The entries of a session of {@code r} (one per map, in request order), holding a session of
   * {@code job} and its files; release them with {@link #closed}.
   */
  ServedSession.Entry[] admit(JobRegistry.Job job, OpenRequest r) throws Refused {
    checkMaps(r.maps(), r.jobId());
    if (!budget.admitSession(r.jobId())) {
      metrics.opensRefusedBySessionCap.incr();
      throw new Refused(ShuffleError.BUSY, "the service holds as many fetch sessions as it"
          + " may (" + ShuffleConfigKeys.SERVER_SESSIONS_MAX_KEY + "=" + limits.sessions()
          + ", " + ShuffleConfigKeys.SERVER_SESSIONS_PER_JOB_MAX_KEY + "="
          + limits.sessionsPerJob() + "); retry later");
    }
    ServedSession.Entry[] entries = new ServedSession.Entry[r.maps().size()];
    for (int i = 0; i < entries.length; i++) {
      entries[i] = entry(job, r.maps().get(i), r.reduce());
      if (entries[i] == null) {
        for (int j = 0; j < i; j++) {
          entries[j].close();
        }
        budget.sessionClosed(r.jobId());
        metrics.opensRefusedByFileCap.incr();
        throw new Refused(ShuffleError.BUSY, "the service holds as many map-output files open"
            + " as it may (" + ShuffleConfigKeys.SERVER_FILES_MAX_KEY + "=" + limits.files()
            + ", " + ShuffleConfigKeys.SERVER_FILES_PER_JOB_MAX_KEY + "=" + limits.filesPerJob()
            + "); retry later");
      }
    }
    return entries;
  }

  /** A session {@link #admit admitted} ended: its files and its place go back. */
  void closed(ServedSession s) {
    for (ServedSession.Entry e : s.entries) {
      e.close();
    }
    budget.sessionClosed(s.job.jobId());
  }

  /** Sessions held now. */
  int sessions() {
    return budget.sessions();
  }

  /** Map-output files open now. */
  int files() {
    return budget.files();
  }

  private void checkMaps(List<String> maps, String jobId) throws Refused {
    String wrong = null;
    if (maps.size() > limits.openMaps()) {
      wrong = "an open of " + maps.size() + " maps (" + ShuffleConfigKeys.SERVER_OPEN_MAPS_MAX_KEY
          + "=" + limits.openMaps() + ")";
    } else {
      Set<String> seen = new HashSet<>();
      for (String attempt : maps) {
        if (!isMapOf(attempt, jobId)) {
          wrong = attempt + " is not a map attempt of " + jobId;
          break;
        }
        if (!seen.add(attempt)) {
          wrong = attempt + " is named twice in one open";
          break;
        }
      }
    }
    if (wrong != null) {
      metrics.opensRefusedByMaps.incr();
      throw new Refused(ShuffleError.BAD_REQUEST, wrong);
    }
  }

  /**
   * True for a map attempt id of {@code jobId} in canonical form only: {@code forName} accepts
   * ids whose parts are not numbers as Hadoop writes them (and the raw text names a directory).
   */
  static boolean isMapOf(String attempt, String jobId) {
    try {
      TaskAttemptID a = TaskAttemptID.forName(attempt);
      return a != null && a.toString().equals(attempt) && a.getTaskType() == TaskType.MAP
          && a.getJobID().toString().equals(jobId);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  /** One map's entry; null when its file would pass a files cap. */
  private ServedSession.Entry entry(JobRegistry.Job job, String attempt, int reduce) {
    MapOutputLocator.Located at;
    try {
      at = locator.locate(job, attempt, reduce);
    } catch (DiskChecker.DiskErrorException | FileNotFoundException e) {
      metrics.outputsNotFound.incr();
      return ServedSession.Entry.failed(OpenResponse.Partition.failed(
          OpenResponse.Status.NOT_FOUND, "no output of " + attempt + " on this node"));
    } catch (IOException e) {
      metrics.errors.incr();
      LOG.warn("hpc shuffle: cannot read the index of {}: {}", attempt, e.toString());
      return ServedSession.Entry.failed(OpenResponse.Partition.failed(OpenResponse.Status.ERROR,
          "index of " + attempt + " unreadable: " + e.getMessage()));
    }
    File f = new File(at.data().toUri().getPath());
    OpenBudget.SharedFile file = null;
    try {
      file = budget.acquire(job.jobId(), f.getPath(),
          () -> SecureIOUtils.openForRandomRead(f, "r", job.user(), null).getChannel());
      if (file == null) {
        return null;
      }
      long end = at.index().startOffset + at.index().partLength;
      long size = file.channel().size();
      if (size < end) {
        throw new IOException(f + " has " + size + " bytes but its index places reduce "
            + reduce + " up to byte " + end + " (truncated map output?)");
      }
      return new ServedSession.Entry(OpenResponse.Partition.ok(at.index().rawLength,
          at.index().partLength), file, at.index());
    } catch (IOException e) {
      metrics.errors.incr();
      LOG.warn("hpc shuffle: cannot serve {}: {}", attempt, e.toString());
      if (file != null) {
        file.release();
      }
      return ServedSession.Entry.failed(OpenResponse.Partition.failed(
          OpenResponse.Status.ERROR, e.getMessage()));
    }
  }
}
