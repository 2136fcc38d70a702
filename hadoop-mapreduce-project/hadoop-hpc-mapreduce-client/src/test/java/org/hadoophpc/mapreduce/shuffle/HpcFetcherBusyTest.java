/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.junit.jupiter.api.Test;

/**
 * A service that answers BUSY forever does not hold a reducer forever: after
 * {@code mapreduce.hpc.shuffle.busy.max.retries} BUSY answers in a row the fetcher counts a
 * failed fetch of each map (stock's copyFailed: the host is penalised, the AM told), and the
 * count starts again.
 */
class HpcFetcherBusyTest {
  @Test
  void aServiceThatIsAlwaysBusyFailsTheFetchAfterTheBound() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    Configuration conf = new Configuration(false);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, "127.0.0.1");
    conf.set(TransportConfigKeys.IO_TIMEOUT_KEY, "10s");
    conf.setInt(ShuffleConfigKeys.BUSY_MAX_RETRIES_KEY, 2);
    AtomicInteger opens = new AtomicInteger();
    try (Transport serving = TransportFactory.create(conf);
        Listener busy = serving.listen(new InetSocketAddress("127.0.0.1", 0),
            new RequestHandler() {
              @Override
              public void onRequest(Connection c, org.hadoophpc.net.Buffer request,
                  Responder responder) {
                request.release();
                opens.incrementAndGet();
                responder.fail(ShuffleError.BUSY.code(), "read queue full; retry later");
              }
            });
        Transport transport = TransportFactory.create(conf)) {
      conf.setInt(ShuffleConfigKeys.PORT_KEY, busy.address().getPort());
      conf.setInt(ShuffleConfigKeys.PORT_RANGE_KEY, 1);
      JobConf job = new JobConf(conf);
      org.apache.hadoop.mapred.TaskAttemptID reduce =
          new org.apache.hadoop.mapred.TaskAttemptID("1700", 5, TaskType.REDUCE, 0, 0);
      List<TaskAttemptID> maps = List.of(
          new org.apache.hadoop.mapred.TaskAttemptID("1700", 5, TaskType.MAP, 0, 0),
          new org.apache.hadoop.mapred.TaskAttemptID("1700", 5, TaskType.MAP, 1, 0));
      RecordingScheduler scheduler = new RecordingScheduler(job, reduce, maps);
      MapHost host = new MapHost("127.0.0.1:13562", "http://127.0.0.1:13562/mapOutput");
      try (ShuffleFetchClient client = new ShuffleFetchClient(transport,
          TransportConf.from(conf), ShuffleConf.from(conf),
          JobTokenSecretManager.createSecretKey("token".getBytes()))) {
        HpcFetcher<Object, Object> fetcher = new HpcFetcher<>(new HpcShuffleConsumer<>(), 0,
            job, reduce, scheduler, null, ShuffleClientMetrics.create(reduce, job),
            Reporter.NULL, client);
        // within the bound: waited out, the maps go back, nothing failed
        for (int round = 1; round <= 2; round++) {
          fetcher.copyFromHost(host);
          assertEquals(List.of(), scheduler.failed, "round " + round);
          assertEquals(2 * round, scheduler.putBack.get());
        }
        // one BUSY more: a failed fetch of each map, which go back to the scheduler as well
        fetcher.copyFromHost(host);
        assertEquals(maps, scheduler.failed);
        assertEquals(1, scheduler.hostFailures.get());
        assertEquals(6, scheduler.putBack.get());
        // and the count starts again
        fetcher.copyFromHost(host);
        assertEquals(2, scheduler.failed.size());
        assertTrue(opens.get() >= 4, "opens: " + opens.get());
      }
    }
  }
}
