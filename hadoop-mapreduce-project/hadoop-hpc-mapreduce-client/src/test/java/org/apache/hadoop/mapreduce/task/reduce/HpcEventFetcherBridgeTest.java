/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.apache.hadoop.mapreduce.task.reduce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.mapred.Counters;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapTaskCompletionEventsUpdate;
import org.apache.hadoop.mapred.TaskCompletionEvent;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapred.TaskUmbilicalProtocol;
import org.apache.hadoop.mapred.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.util.Progress;
import org.hadoophpc.mapreduce.shuffle.RecordingScheduler;
import org.junit.jupiter.api.Test;

/**
 * The bridge starts the event poller for our plugin: map-completion events from the AM (here a
 * fake umbilical) reach the scheduler as hosts with map outputs, also when they arrive after
 * the first polls; close() stops it; an AM that keeps failing fails the reduce through the
 * reporter.
 */
class HpcEventFetcherBridgeTest {

  @Test
  void eventsFromTheUmbilicalReachTheScheduler() throws Exception {
    JobConf conf = new JobConf(false);
    conf.setNumMapTasks(2);
    // the task runtime hands plugins the old-API ids, and the event fetcher relies on it
    TaskAttemptID reduce = new TaskAttemptID("1700", 3, TaskType.REDUCE, 0, 0);
    TaskAttemptID map0 = new TaskAttemptID("1700", 3, TaskType.MAP, 0, 0);
    TaskAttemptID map1 = new TaskAttemptID("1700", 3, TaskType.MAP, 1, 0);
    TaskCompletionEvent[] events = {
        new TaskCompletionEvent(0, map0, 0,
            true, TaskCompletionEvent.Status.SUCCEEDED, "http://node-a:13562"),
        new TaskCompletionEvent(1, map1, 1,
            true, TaskCompletionEvent.Status.SUCCEEDED, "http://node-b:13562")};
    AtomicInteger calls = new AtomicInteger();
    TaskUmbilicalProtocol umbilical = (TaskUmbilicalProtocol) Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {TaskUmbilicalProtocol.class},
        (proxy, method, args) -> {
          if (method.getName().equals("getMapCompletionEvents")) {
            int from = (Integer) args[1];
            int call = calls.incrementAndGet();
            // map0 at once, map1 only from the third poll on: events that come later arrive too
            TaskCompletionEvent[] batch = from == 0 ? new TaskCompletionEvent[] {events[0]}
                : from == 1 && call >= 3 ? new TaskCompletionEvent[] {events[1]}
                : new TaskCompletionEvent[0];
            return new MapTaskCompletionEventsUpdate(batch, false);
          }
          throw new UnsupportedOperationException(method.getName());
        });
    TaskStatus status = RecordingScheduler.reduceStatus();
    Counters counters = new Counters();
    AtomicInteger failures = new AtomicInteger();
    ShuffleSchedulerImpl<Object, Object> scheduler = new ShuffleSchedulerImpl<>(conf, status,
        reduce, t -> failures.incrementAndGet(), new Progress(),
        counters.findCounter("t", "shuffled"), counters.findCounter("t", "bytes"),
        counters.findCounter("t", "failed"));

    HpcEventFetcherBridge bridge = HpcEventFetcherBridge.start(reduce, umbilical, scheduler,
        t -> failures.incrementAndGet(), 100, 10);
    MapHost[] got = new MapHost[2];
    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      got[0] = scheduler.getHost();
      got[1] = scheduler.getHost();
    }, () -> "no map hosts from the event fetcher; reported failures: " + failures.get());
    bridge.close();
    MapHost first = got[0];
    MapHost second = got[1];

    List<String> hosts = List.of(first.getHostName(), second.getHostName());
    assertTrue(hosts.contains("node-a:13562") && hosts.contains("node-b:13562"),
        hosts.toString());
    assertEquals(1, scheduler.getMapsForHost(first).size());
    assertTrue(calls.get() >= 3);
    assertTrue(bridge.polls() >= 3);
    assertEquals(0, failures.get());
  }

  @Test
  void anAmThatKeepsFailingFailsTheReduceThroughTheReporter() throws Exception {
    JobConf conf = new JobConf(false);
    conf.setNumMapTasks(1);
    TaskAttemptID reduce = new TaskAttemptID("1700", 4, TaskType.REDUCE, 0, 0);
    AtomicInteger calls = new AtomicInteger();
    TaskUmbilicalProtocol umbilical = (TaskUmbilicalProtocol) Proxy.newProxyInstance(
        getClass().getClassLoader(), new Class<?>[] {TaskUmbilicalProtocol.class},
        (proxy, method, args) -> {
          calls.incrementAndGet();
          throw new java.io.IOException("AM gone");
        });
    Counters counters = new Counters();
    ShuffleSchedulerImpl<Object, Object> scheduler = new ShuffleSchedulerImpl<>(conf,
        RecordingScheduler.reduceStatus(), reduce, t -> { }, new Progress(),
        counters.findCounter("t", "shuffled"),
        counters.findCounter("t", "bytes"), counters.findCounter("t", "failed"));
    java.util.concurrent.CompletableFuture<Throwable> reported =
        new java.util.concurrent.CompletableFuture<>();
    HpcEventFetcherBridge.Poller<Object, Object> poller = new HpcEventFetcherBridge.Poller<>(
        reduce, umbilical, scheduler, reported::complete, 100, 1, 1);
    poller.start();
    Throwable t = reported.get(60, java.util.concurrent.TimeUnit.SECONDS);
    poller.shutDown();
    assertEquals(HpcEventFetcherBridge.MAX_FAILED_POLLS, calls.get());
    assertTrue(t.getMessage().contains("polls in a row for map-completion events failed")
        && t.getMessage().contains("AM gone"), t.getMessage());
  }

}
