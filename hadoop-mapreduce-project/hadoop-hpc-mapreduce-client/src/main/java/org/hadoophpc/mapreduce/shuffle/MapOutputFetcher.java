/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.io.InterruptedIOException;

import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.MergeManager;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleSchedulerImpl;

/**
 * A fetcher thread of {@link HpcShuffleConsumer}: waits for merge memory, takes a host from
 * Hadoop's scheduler, copies what it can of that host's map outputs, gives the host back.
 * Subclasses say where the bytes come from: the transport ({@link HpcFetcher}) or the shared
 * Lustre mount ({@link SharedFsFetcher}).
 */
abstract class MapOutputFetcher<K, V> extends Thread {
  final HpcShuffleConsumer<K, V> consumer;
  final int id;
  final ShuffleSchedulerImpl<K, V> scheduler;
  final MergeManager<K, V> merger;
  final ShuffleClientMetrics metrics;
  final Reporter reporter;
  volatile boolean stopped;

  MapOutputFetcher(String name, HpcShuffleConsumer<K, V> consumer, int id,
      ShuffleSchedulerImpl<K, V> scheduler, MergeManager<K, V> merger,
      ShuffleClientMetrics metrics, Reporter reporter) {
    super(name + "#" + id);
    setDaemon(true);
    this.consumer = consumer;
    this.id = id;
    this.scheduler = scheduler;
    this.merger = merger;
    this.metrics = metrics;
    this.reporter = reporter;
  }

  /** Copies the outputs of the maps the scheduler holds for {@code host}; puts back the rest. */
  abstract void copyFromHost(MapHost host) throws IOException;

  @Override
  public void run() {
    try {
      while (!stopped && !consumer.fallingBack() && !isInterrupted()) {
        MapHost host = null;
        try {
          merger.waitForResource();
          host = scheduler.getHost();
          metrics.threadBusy();
          copyFromHost(host);
        } finally {
          if (host != null) {
            scheduler.freeHost(host);
            metrics.threadFree();
          }
        }
      }
    } catch (InterruptedException | InterruptedIOException e) {
      // shut down
    } catch (Throwable t) {
      if (!stopped) {
        consumer.reportException(t);
      }
    }
  }

  void shutDown() throws InterruptedException {
    stopped = true;
    interrupt();
    join(10_000);
  }
}
