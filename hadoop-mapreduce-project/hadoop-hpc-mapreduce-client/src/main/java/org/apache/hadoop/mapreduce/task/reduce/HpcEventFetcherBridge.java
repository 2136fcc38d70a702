/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: EventFetcher, the thread that polls the MapReduce AM for
// map-completion events and feeds them (including obsolete and failed maps) to
// ShuffleSchedulerImpl, is package-private. Reusing it keeps the hpc shuffle's view of which
// maps exist, failed or were re-run identical to stock's. This is the only class hadoop-hpc puts
// in org.apache.hadoop.mapreduce.task.reduce; HpcEventFetcherBridgeTest covers it.
package org.apache.hadoop.mapreduce.task.reduce;

import org.apache.hadoop.mapred.TaskUmbilicalProtocol;
import org.apache.hadoop.mapreduce.TaskAttemptID;

/** Starts and stops Hadoop's map-completion event fetcher for a reduce task. */
public final class HpcEventFetcherBridge implements AutoCloseable {
  private final EventFetcher<?, ?> fetcher;

  private HpcEventFetcherBridge(EventFetcher<?, ?> fetcher) {
    this.fetcher = fetcher;
  }

  /** Starts polling the AM for events of {@code reduce}'s job, up to {@code maxEvents} a call. */
  public static <K, V> HpcEventFetcherBridge start(TaskAttemptID reduce,
      TaskUmbilicalProtocol umbilical, ShuffleSchedulerImpl<K, V> scheduler,
      ExceptionReporter reporter, int maxEvents) {
    EventFetcher<K, V> f = new EventFetcher<>(reduce, umbilical, scheduler, reporter, maxEvents);
    f.start();
    return new HpcEventFetcherBridge(f);
  }

  /** Stops the fetcher thread and waits for it. */
  @Override
  public void close() throws InterruptedException {
    fetcher.shutDown();
  }
}
