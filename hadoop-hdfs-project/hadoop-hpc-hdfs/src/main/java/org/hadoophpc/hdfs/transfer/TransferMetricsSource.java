/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import org.apache.hadoop.metrics2.MetricsCollector;
import org.apache.hadoop.metrics2.MetricsInfo;
import org.apache.hadoop.metrics2.MetricsRecordBuilder;
import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.Interns;
import org.apache.hadoop.util.StringUtils;
import org.hadoophpc.metrics.MetricsRegistration;

/**
 * {@link TransferMetrics} as a Hadoop metrics2 source: record {@code HpcDataTransfer}, context
 * {@code dfs}; in JMX {@code Hadoop:service=DataNode,name=HpcDataTransfer-<transfer port>} for
 * a DataNode's endpoint and {@code Hadoop:service=<process>,name=HpcDataTransfer-client} for a
 * process's clients (a JVM without a started metrics system has no bean). Tags {@code
 * Transport} (verbs, tcp or none) and {@code StockTcpReason}; counters {@code
 * <Role>ConnectionsOverTransport}, {@code <Role>ConnectionsOverStockTcp} (clients and mirrors:
 * streams opened over plain TCP), {@code TransportBytesIn/Out}, {@code Fallbacks} and one
 * {@code Fallbacks<Reason>} per reason. JMX shows a snapshot at most one metrics period
 * ({@code *.period}, 10 s) old, as every Hadoop bean. A view: it holds no counts itself.
 */
final class TransferMetricsSource implements MetricsSource {
  static final String RECORD = "HpcDataTransfer";
  private static final MetricsInfo RECORD_INFO = Interns.info(RECORD,
      "hadoop-hpc HDFS DataTransfer over the transport");
  private static final MetricsInfo TRANSPORT = Interns.info("Transport",
      "transport of HDFS block streams where the peer serves it: verbs, tcp, or none");
  private static final MetricsInfo REASON = Interns.info("StockTcpReason",
      "why every stream uses stock TCP (Transport=none)");
  private static final MetricsInfo BYTES_IN = Interns.info("TransportBytesIn",
      "stream bytes received over the transport");
  private static final MetricsInfo BYTES_OUT = Interns.info("TransportBytesOut",
      "stream bytes sent over the transport");
  private static final MetricsInfo FALLBACKS = Interns.info("Fallbacks",
      "streams that went over stock TCP, all reasons");

  private final TransferMetrics metrics;
  private final String sourceName;

  private TransferMetricsSource(TransferMetrics metrics, String sourceName) {
    this.metrics = metrics;
    this.sourceName = sourceName;
  }

  /** The source name of {@code metrics}: HpcDataTransfer-&lt;port&gt; or HpcDataTransfer-client. */
  static String sourceName(TransferMetrics metrics) {
    String n = metrics.name();
    return RECORD + "-" + (n.startsWith("datanode-") ? n.substring("datanode-".length()) : n);
  }

  /**
   * Registers {@code metrics} with the process's metrics system; never fails the caller (a
   * metrics problem is one WARN line). Returns the registered source, or null.
   */
  static TransferMetricsSource register(TransferMetrics metrics) {
    TransferMetricsSource s = new TransferMetricsSource(metrics, sourceName(metrics));
    return MetricsRegistration.register(s.sourceName, RECORD_INFO.description(), s) ? s : null;
  }

  void unregister() {
    MetricsRegistration.unregister(sourceName);
  }

  @Override
  public void getMetrics(MetricsCollector collector, boolean all) {
    MetricsRecordBuilder rb = collector.addRecord(RECORD_INFO).setContext("dfs")
        .tag(TRANSPORT, metrics.transport()).tag(REASON, metrics.stockTcpReason());
    for (TransferMetrics.Role role : TransferMetrics.Role.values()) {
      String r = StringUtils.camelize(role.name());
      rb.addCounter(Interns.info(r + "ConnectionsOverTransport",
          r.toLowerCase() + " streams over the transport"), metrics.connections(role));
      if (role != TransferMetrics.Role.SERVER) { // the DataNode's own TCP accepts are stock's
        rb.addCounter(Interns.info(r + "ConnectionsOverStockTcp",
            r.toLowerCase() + " streams over stock TCP"), metrics.tcpConnections(role));
      }
    }
    rb.addCounter(BYTES_IN, metrics.bytesIn()).addCounter(BYTES_OUT, metrics.bytesOut())
        .addCounter(FALLBACKS, metrics.fallbacks())
        .addCounter(Interns.info("HelloRetries", "Streams whose HELLO went unanswered and was"
            + " tried once more on a new connection"), metrics.helloRetries());
    for (TransferMetrics.Fallback f : TransferMetrics.Fallback.values()) {
      rb.addCounter(Interns.info("Fallbacks" + StringUtils.camelize(f.name()),
          "streams over stock TCP: " + f.name().toLowerCase()), metrics.fallbacks(f));
    }
  }
}
