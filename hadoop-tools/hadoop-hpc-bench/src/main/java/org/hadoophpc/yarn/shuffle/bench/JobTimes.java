/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle.bench;

import java.io.IOException;
import java.util.Locale;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.jobhistory.JobHistoryParser;
import org.apache.hadoop.mapreduce.v2.jobhistory.JHAdminConfig;

/**
 * Prints a finished job's times from its history file (for {@code dev-support/bench/terasort}):
 * {@code job=<id> elapsed=<s> shuffle_tail=<s> maps=<s> reduce_merge=<s> reduce_run=<s>}: the
 * shuffle tail is the time from the end of the last successful map to the end of the last
 * successful reducer's shuffle; maps from the first map's start to the last map's end; the
 * reducers' final merge (shuffle end to sort end) and reduce phase (sort end to finish),
 * averaged over reducers. Where the time goes, for the benchmark's report.
 *
 * <p>Usage: {@code JobTimes <job id>} with the cluster's configuration on the classpath.
 */
public final class JobTimes {
  private JobTimes() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: JobTimes <job id>");
      System.exit(2);
    }
    JobConf conf = new JobConf(new Configuration());
    Path history = find(conf, args[0]);
    JobHistoryParser.JobInfo job = new JobHistoryParser(FileSystem.get(history.toUri(), conf),
        history).parse();
    long mapsEnd = 0;
    long mapsStart = Long.MAX_VALUE;
    long shuffleEnd = 0;
    long merge = 0;
    long reduce = 0;
    int reducers = 0;
    for (JobHistoryParser.TaskInfo t : job.getAllTasks().values()) {
      for (JobHistoryParser.TaskAttemptInfo a : t.getAllTaskAttempts().values()) {
        if (!"SUCCEEDED".equals(a.getTaskStatus())) {
          continue;
        }
        if (a.getTaskType() == TaskType.MAP) {
          mapsEnd = Math.max(mapsEnd, a.getFinishTime());
          mapsStart = Math.min(mapsStart, a.getStartTime());
        } else if (a.getTaskType() == TaskType.REDUCE) {
          shuffleEnd = Math.max(shuffleEnd, a.getShuffleFinishTime());
          merge += a.getSortFinishTime() - a.getShuffleFinishTime();
          reduce += a.getFinishTime() - a.getSortFinishTime();
          reducers++;
        }
      }
    }
    int r = Math.max(1, reducers);
    System.out.printf(Locale.ROOT, "job=%s elapsed=%.1f shuffle_tail=%.1f maps=%.1f"
        + " reduce_merge=%.1f reduce_run=%.1f%n", args[0],
        (job.getFinishTime() - job.getSubmitTime()) / 1000.0,
        Math.max(0, shuffleEnd - mapsEnd) / 1000.0,
        mapsStart == Long.MAX_VALUE ? 0 : (mapsEnd - mapsStart) / 1000.0,
        merge / 1000.0 / r, reduce / 1000.0 / r);
  }

  /** The job's .jhist file in the history server's done or intermediate dirs (waits 60 s). */
  private static Path find(JobConf conf, String jobId) throws IOException, InterruptedException {
    String staging = conf.get(JHAdminConfig.MR_HISTORY_INTERMEDIATE_DONE_DIR,
        conf.get("yarn.app.mapreduce.am.staging-dir", "/tmp/hadoop-yarn/staging")
            + "/history/done_intermediate");
    String done = conf.get(JHAdminConfig.MR_HISTORY_DONE_DIR,
        conf.get("yarn.app.mapreduce.am.staging-dir", "/tmp/hadoop-yarn/staging")
            + "/history/done");
    for (int i = 0; i < 120; i++) {
      for (String d : new String[] {done, staging}) {
        Path dir = new Path(d);
        FileSystem fs = dir.getFileSystem(conf);
        if (!fs.exists(dir)) {
          continue;
        }
        RemoteIterator<LocatedFileStatus> it = fs.listFiles(dir, true);
        while (it.hasNext()) {
          Path p = it.next().getPath();
          if (p.getName().startsWith(jobId) && p.getName().endsWith(".jhist")) {
            return p;
          }
        }
      }
      Thread.sleep(500);
    }
    throw new IOException("no history file for " + jobId + " under " + done + " or " + staging);
  }
}
