/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleSchedulerImpl;
import org.apache.hadoop.util.Progress;

/** Records what a fetcher tells the scheduler; holds the same maps for any host. */
public final class RecordingScheduler extends ShuffleSchedulerImpl<Object, Object> {
  final List<TaskAttemptID> maps;
  final List<TaskAttemptID> failed = new ArrayList<>();
  final AtomicInteger putBack = new AtomicInteger();
  final AtomicInteger hostFailures = new AtomicInteger();

  RecordingScheduler(JobConf conf, org.apache.hadoop.mapred.TaskAttemptID reduce,
      List<TaskAttemptID> maps) {
    super(conf, reduceStatus(), reduce, t -> {
      throw new AssertionError("reported", t);
    }, new Progress(), new Counters().findCounter("t", "shuffled"),
        new Counters().findCounter("t", "bytes"), new Counters().findCounter("t", "failed"));
    this.maps = maps;
  }

  @Override
  public synchronized List<TaskAttemptID> getMapsForHost(MapHost host) {
    return new ArrayList<>(maps);
  }

  @Override
  public synchronized void copyFailed(TaskAttemptID map, MapHost host, boolean readError,
      boolean connectExcpt) {
    failed.add(map);
  }

  @Override
  public synchronized void putBackKnownMapOutput(MapHost host, TaskAttemptID map) {
    putBack.incrementAndGet();
  }

  @Override
  public synchronized void hostFailed(String hostname) {
    hostFailures.incrementAndGet();
  }

  /** The status of a reduce task, as a scheduler needs one. */
  public static TaskStatus reduceStatus() {
    return new TaskStatus() {
      @Override
      public boolean getIsMap() {
        return false;
      }

      @Override
      public void addFetchFailedMap(org.apache.hadoop.mapred.TaskAttemptID mapTaskId) {
      }
    };
  }
}
