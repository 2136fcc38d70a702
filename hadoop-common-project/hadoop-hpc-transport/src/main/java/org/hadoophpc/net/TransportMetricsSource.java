/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.concurrent.atomic.AtomicInteger;

import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;
import org.hadoophpc.metrics.MetricsRegistration;

/**
 * One transport's {@link TransportMetrics} and buffer pool as a Hadoop metrics2 source: record
 * {@code HpcTransport}, context {@code hpc}, source (and JMX) name
 * {@code HpcTransport-<tcp|verbs>-<n>} (n counts the transports of the process), tag
 * {@code Transport}. Counters {@code ConnectionsOpened}, {@code ConnectionsClosed},
 * {@code ConnectFailures}, {@code BytesSent}, {@code BytesReceived}, {@code RdmaBytesRead},
 * {@code RdmaBytesWritten}, {@code OpTimeouts}, {@code OpRemoteErrors}, {@code OpsFailedByClose},
 * {@code PoolExhausted}, {@code PoolSlabFailures}; gauges {@code ConnectionsOpen},
 * {@code PoolUsedBytes}, {@code PoolReservedBytes}, {@code PoolMaxBytes}. In JMX as
 * {@code Hadoop:service=<process>,name=HpcTransport-...} where the process started a metrics
 * system (every Hadoop daemon and task does). A view: it holds no counts itself.
 */
public final class TransportMetricsSource implements MetricsSource {
  public static final String RECORD = "HpcTransport";
  private static final MetricsInfo RECORD_INFO = Interns.info(RECORD,
      "hadoop-hpc transport: connections, bytes, failures, registered memory");
  private static final MetricsInfo TRANSPORT = Interns.info("Transport", "verbs or tcp");
  private static final AtomicInteger SEQUENCE = new AtomicInteger();

  private final Transport transport;
  private final TransportMetrics metrics;
  private final String sourceName;

  private TransportMetricsSource(Transport transport, TransportMetrics metrics, String name) {
    this.transport = transport;
    this.metrics = metrics;
    this.sourceName = name;
  }

  /**
   * Registers {@code transport}'s metrics with the process's metrics system; never fails the
   * caller (a metrics problem is one WARN line). Returns the source, or null.
   */
  public static TransportMetricsSource register(Transport transport, TransportMetrics metrics) {
    String name = RECORD + "-" + transport.name() + "-" + SEQUENCE.incrementAndGet();
    TransportMetricsSource s = new TransportMetricsSource(transport, metrics, name);
    return MetricsRegistration.register(name, RECORD_INFO.description(), s) ? s : null;
  }

  public String sourceName() {
    return sourceName;
  }

  public void unregister() {
    MetricsRegistration.unregister(sourceName);
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    BufferPool pool = transport.bufferPool();
    collector.addRecord(RECORD_INFO).setContext("hpc")
        .tag(TRANSPORT, transport.name())
        .addCounter(info("ConnectionsOpened", "connections connected or accepted"),
            metrics.connectionsOpened())
        .addCounter(info("ConnectionsClosed", "connections closed"), metrics.connectionsClosed())
        .addGauge(info("ConnectionsOpen", "connections open now"), metrics.connectionsOpen())
        .addCounter(info("LocalConnections", "tcp: connections connected or accepted by a"
            + " same-host Unix domain socket"), metrics.localConnections())
        .addCounter(info("ForeignPeers", "tcp: local-socket connections refused because the"
            + " peer runs as another user (SO_PEERCRED)"), metrics.foreignPeers())
        .addCounter(info("ConnectFailures", "connects refused, unreachable or timed out"),
            metrics.connectFailures())
        .addCounter(info("BytesSent", "bytes sent as messages (tcp: frames; verbs: SENDs),"
            + " headers included"), metrics.bytesSent())
        .addCounter(info("BytesReceived", "bytes received as messages, headers included"),
            metrics.bytesReceived())
        .addCounter(info("RdmaBytesRead", "bytes this side read from peers by RDMA READ"),
            metrics.rdmaBytesRead())
        .addCounter(info("RdmaBytesWritten", "bytes this side wrote to peers by RDMA WRITE"),
            metrics.rdmaBytesWritten())
        .addCounter(info("OpTimeouts", "operations past hadoop.hpc.transport.io.timeout"),
            metrics.timeouts())
        .addCounter(info("OpRemoteErrors", "operations the peer answered with an error"),
            metrics.remoteErrors())
        .addCounter(info("OpsFailedByClose", "operations failed by their connection closing"),
            metrics.failedByClose())
        .addCounter(info("PoolExhausted", "allocations that found the buffer pool at its"
            + " bound (back-pressure)"), pool.exhaustedCount())
        .addCounter(info("PoolSlabFailures", "slabs that could not be registered or allocated"
            + " (locked-memory limit, direct memory)"), pool.slabFailures())
        .addGauge(info("PoolUsedBytes", "buffer pool bytes in use"), pool.usedBytes())
        .addGauge(info("PoolReservedBytes", "buffer pool bytes reserved (registered on verbs)"),
            pool.reservedBytes())
        .addGauge(info("PoolMaxBytes", "hadoop.hpc.transport.buffer.pool.max"), pool.maxBytes());
  }

  private static MetricsInfo info(String name, String description) {
    return Interns.info(name, description);
  }
}
