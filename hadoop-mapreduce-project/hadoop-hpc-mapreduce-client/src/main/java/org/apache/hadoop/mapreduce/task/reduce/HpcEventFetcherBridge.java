/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
// Why this class is in Hadoop's package: EventFetcher, the thread that polls the MapReduce AM for
// map-completion events and feeds them (including obsolete and failed maps) to
// ShuffleSchedulerImpl, is package-private. Reusing its event handling keeps the hpc shuffle's
// view of which maps exist, failed or were re-run identical to stock's; only the polling loop is
// ours, because stock's waits a fixed second between polls. This is the only class hadoop-hpc
// puts in org.apache.hadoop.mapreduce.task.reduce; HpcEventFetcherBridgeTest covers it.
package org.apache.hadoop.mapreduce.task.reduce;

import java.io.IOException;

import org.apache.hadoop.mapred.TaskUmbilicalProtocol;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Starts and stops the map-completion event poller of a reduce task. */
public final class HpcEventFetcherBridge implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(HpcEventFetcherBridge.class);

  /** Failed polls in a row before the reduce fails, and the wait after each (as stock). */
  static final int MAX_FAILED_POLLS = 10;
  static final long FAILED_POLL_WAIT_MS = 5000;

  private final Poller<?, ?> poller;

  private HpcEventFetcherBridge(Poller<?, ?> poller) {
    this.poller = poller;
  }

  /**
   * Starts polling the AM for events of {@code reduce}'s job, up to {@code maxEvents} a call,
   * every {@code intervalMs} milliseconds.
   */
  public static <K, V> HpcEventFetcherBridge start(TaskAttemptID reduce,
      TaskUmbilicalProtocol umbilical, ShuffleSchedulerImpl<K, V> scheduler,
      ExceptionReporter reporter, int maxEvents, long intervalMs) {
    Poller<K, V> p = new Poller<>(reduce, umbilical, scheduler, reporter, maxEvents, intervalMs,
        FAILED_POLL_WAIT_MS);
    p.start();
    return new HpcEventFetcherBridge(p);
  }

  /** Polls made so far (each one or more umbilical calls); for tests and logs. */
  long polls() {
    return poller.polls;
  }

  /** Stops the poller thread and waits for it. */
  @Override
  public void close() throws InterruptedException {
    poller.shutDown();
  }

  /**
   * Stock's event handling ({@code getMapCompletionEvents}: every event to the scheduler, in
   * order) on a loop with our interval. Stops when interrupted or shut down; after
   * {@link #MAX_FAILED_POLLS} failed polls in a row the reduce fails through the reporter.
   */
  static final class Poller<K, V> extends EventFetcher<K, V> {
    private final TaskAttemptID reduce;
    private final ExceptionReporter reporter;
    private final long intervalMs;
    private final long failedWaitMs;
    private volatile boolean stopping;
    private volatile long polls;

    Poller(TaskAttemptID reduce, TaskUmbilicalProtocol umbilical,
        ShuffleSchedulerImpl<K, V> scheduler, ExceptionReporter reporter, int maxEvents,
        long intervalMs, long failedWaitMs) {
      super(reduce, umbilical, scheduler, reporter, maxEvents);
      setName("hpc shuffle event poller (" + intervalMs + " ms) for " + reduce);
      this.reduce = reduce;
      this.reporter = reporter;
      this.intervalMs = intervalMs;
      this.failedWaitMs = failedWaitMs;
    }

    @Override
    public void work() {
      int failed = 0;
      try {
        while (!stopping) {
          try {
            int maps = getMapCompletionEvents();
            polls++;
            failed = 0;
            if (maps > 0) {
              LOG.info("{}: {} new map outputs", reduce, maps);
            }
            Thread.sleep(intervalMs);
          } catch (IOException e) {
            if (stopping) {
              return; // an interrupted call while shutting down
            }
            if (++failed >= MAX_FAILED_POLLS) {
              throw new IOException(reduce + ": " + failed + " polls in a row for map-completion"
                  + " events failed; the last: " + e.getMessage(), e);
            }
            LOG.info("{}: poll for map-completion events failed ({} of {}), retrying in {} ms",
                reduce, failed, MAX_FAILED_POLLS, failedWaitMs, e);
            Thread.sleep(failedWaitMs);
          }
        }
      } catch (InterruptedException e) {
        // shut down
      } catch (Throwable t) {
        if (!stopping) {
          reporter.reportException(t);
        }
      }
    }

    @Override
    public void shutDown() {
      stopping = true;
      super.shutDown();
    }
  }
}
