/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportException;
import org.hadoophpc.net.TransportSelector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one rule for whether HDFS DataTransfer uses the transport on this node, applied by the
 * DataNode's plugin and by clients' {@link RdmaSocketFactory}. {@code
 * dfs.hpc.datatransfer.enabled}: {@code false} = stock TCP; {@code true} = the transport,
 * whichever it resolves to; {@code auto} (default) = the transport when it resolves to verbs,
 * or when {@code hadoop.hpc.transport=tcp} asks for the tcp transport; stock TCP when it would
 * be tcp only because no RDMA device is usable. Why: on tcp, HDFS reads over the transport are
 * slower than stock (user guide ch. 9), so a mode that turns the plugin on must not slow HDFS
 * down on a node without RDMA, and such a node's clients must not try (and fail) a transport
 * connection per DataNode. Verbs required and unusable (strict) is left to the transport
 * factory, which reports it. Thread-safe.
 */
final class TransferUse {
  private static final Logger LOG = LoggerFactory.getLogger(TransferUse.class);
  /** Per distinct enabled value + transport settings: empty = {@link TransferClient#shared}. */
  private static final Map<String, Optional<TransferClient>> CLIENTS = new ConcurrentHashMap<>();

  private TransferUse() {
  }

  /**
   * What the rule decides: {@code transport} = the one streams will use ("verbs" or "tcp",
   * the factory may still fall back) or "none", and then {@code whyStockTcp} says why.
   */
  record Decision(String transport, String whyStockTcp) {
    boolean stockTcp() {
      return whyStockTcp != null;
    }
  }

  /**
   * The rule for {@code tc} and {@code conf}'s transport keys, with {@code probe} the node's
   * RDMA devices (asked only when the rule needs them).
   *
   * @throws IllegalArgumentException when a transport key is invalid
   */
  static Decision decide(TransferConf tc, Configuration conf, Supplier<RdmaDevices> probe) {
    if (tc.enabledValue == TransferConf.Enabled.FALSE) {
      return new Decision("none", TransferConfigKeys.ENABLED_KEY + "=false");
    }
    TransportConf t = TransportConf.from(conf);
    if (t.kind() == TransportConf.Kind.TCP) {
      return new Decision("tcp", null);
    }
    TransportSelector.Selection s;
    try {
      s = TransportSelector.select(t, probe);
    } catch (TransportException e) {
      return new Decision("verbs", null); // verbs strict and unusable: the factory says why
    }
    if (s.verbs() || tc.enabledValue == TransferConf.Enabled.TRUE) {
      return new Decision(s.verbs() ? "verbs" : "tcp", null);
    }
    return new Decision("none", noRdma(s.reason()));
  }

  /**
   * As {@link #decide} once the transport is open (null: use it): under auto, a tcp transport
   * that was not asked for (verbs failed to open) means stock TCP too.
   */
  static String whyStockTcpOnceOpen(TransferConf tc, Configuration conf, String transportName) {
    if (tc.enabledValue != TransferConf.Enabled.AUTO || !"tcp".equals(transportName)
        || TransportConf.from(conf).kind() == TransportConf.Kind.TCP) {
      return null;
    }
    return noRdma("the transport fell back to tcp, see the transport's line above");
  }

  private static String noRdma(String reason) {
    return "no usable RDMA (" + reason + "); " + TransferConfigKeys.ENABLED_KEY + "=auto uses the "
        + "transport on RDMA or with " + TransportConfigKeys.TRANSPORT_KEY + "=tcp; set "
        + TransferConfigKeys.ENABLED_KEY + "=true to use the tcp transport anyway";
  }

  /**
   * The client for {@code conf} (clients of one process share it): {@link
   * TransferClient#shared} when the rule says transport, else one that opens stock TCP
   * sockets, logged once per distinct settings. Registers the process's client metrics
   * source on first use.
   */
  static TransferClient client(Configuration conf) {
    registerClientSource();
    TransferConf tc = TransferConf.from(conf);
    String key = tc.enabledValue + " " + TransportConf.from(conf);
    Optional<TransferClient> stock = CLIENTS.computeIfAbsent(key, k -> {
      Decision d = decide(tc, conf, RdmaDevices::probe);
      if (!d.stockTcp()) {
        TransferMetrics.client().usingTransport(d.transport());
        return Optional.empty();
      }
      LOG.info("HDFS DataTransfer from this process: over stock TCP ({})", d.whyStockTcp());
      TransferMetrics.client().usingStockTcp(d.whyStockTcp());
      return Optional.of(new TransferClient(TransferConf.stockTcp(conf), null, d.whyStockTcp(),
          TransferMetrics.client(), TransferMetrics.Role.CLIENT));
    });
    return stock.orElseGet(() -> TransferClient.shared(conf));
  }

  /**
   * Registers the client source unless the process's metrics system has it: a metrics system
   * that shut down (a MiniDFSCluster's, in tests) forgets its sources and may start again.
   */
  private static void registerClientSource() {
    String name = TransferMetricsSource.sourceName(TransferMetrics.client());
    synchronized (TransferUse.class) {
      if (DefaultMetricsSystem.instance().getSource(name) == null) {
        TransferMetricsSource.register(TransferMetrics.client());
      }
    }
  }
}
