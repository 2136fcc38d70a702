/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.ShutdownHookManager;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens transfer streams to DataNodes for one role: the transport, the endpoint rule (TCP
 * transfer port + offset), the negative cache of DataNodes reached over TCP, the metrics. One
 * per process for clients ({@link #shared(Configuration)}), one per DataNode for its mirrors.
 */
final class TransferClient {
  private static final Logger LOG = LoggerFactory.getLogger(TransferClient.class);
  private static final long BUSY_CACHE_MS = 1000;
  private static final Map<String, TransferClient> SHARED = new ConcurrentHashMap<>();

  final TransferConf conf;
  final TransferMetrics metrics;
  final TransferMetrics.Role role;
  private final Transport transport;
  private final String noTransport;
  private final Map<InetSocketAddress, Long> negative = new ConcurrentHashMap<>();

  TransferClient(TransferConf conf, Transport transport, String noTransport,
      TransferMetrics metrics, TransferMetrics.Role role) {
    this.conf = conf;
    this.transport = transport;
    this.noTransport = noTransport;
    this.metrics = metrics;
    this.role = role;
  }

  /**
   * The process's client for the transfer and transport settings of {@code c} (one per
   * distinct set of them; its transport lives until the JVM exits).
   */
  static TransferClient shared(Configuration c) {
    String settings = new java.util.TreeMap<>(c.getPropsWithPrefix(TransferConfigKeys.PREFIX))
        + " " + new java.util.TreeMap<>(c.getPropsWithPrefix(TransportConfigKeys.TRANSPORT_KEY));
    TransferClient known = SHARED.get(settings);
    return known != null ? known : SHARED.computeIfAbsent(settings, k -> create(c));
  }

  private static TransferClient create(Configuration c) {
    TransferConf conf = TransferConf.from(c);
    Transport t = null;
    String why = null;
    if (!conf.enabled) {
      why = TransferConfigKeys.ENABLED_KEY + "=false";
    } else {
      try {
        t = TransportFactory.create(c);
        Transport closing = t;
        ShutdownHookManager.get().addShutdownHook(() -> {
          try {
            closing.close();
          } catch (IOException e) {
            LOG.debug("closing the HDFS transfer transport", e);
          }
        }, 5);
      } catch (IOException | RuntimeException e) {
        why = e.getMessage();
      }
      String stock = t == null ? null : TransferUse.whyStockTcpOnceOpen(conf, c, t.name());
      if (stock != null) {
        try {
          t.close();
        } catch (IOException e) {
          LOG.debug("closing the HDFS transfer transport", e);
        }
        t = null;
        why = stock;
      }
    }
    if (t != null) {
      TransferMetrics.client().usingTransport(t);
    } else {
      TransferMetrics.client().usingStockTcp(why);
    }
    LOG.info("HDFS DataTransfer from this process: {}", t != null
        ? "over the " + t.name() + " transport (endpoint = transfer port "
            + (conf.portOffset >= 0 ? "+ " : "- ") + Math.abs(conf.portOffset)
            + ", stream.fails.without.transport=" + conf.streamFailsWithoutTransport + ")"
        : "over TCP (" + why + ")");
    return new TransferClient(conf, t, why, TransferMetrics.client(),
        TransferMetrics.Role.CLIENT);
  }

  /** Why streams go over TCP before any attempt, or null when the transport may be tried. */
  TransferMetrics.Fallback precheck(InetSocketAddress tcpAddress, boolean bound) {
    if (!conf.enabled) {
      return TransferMetrics.Fallback.DISABLED;
    }
    if (transport == null) {
      return TransferMetrics.Fallback.NO_TRANSPORT;
    }
    if (bound) {
      return TransferMetrics.Fallback.LOCAL_INTERFACES;
    }
    if (tcpAddress.isUnresolved() || tcpAddress.getAddress().getAddress().length != 4) {
      return TransferMetrics.Fallback.ADDRESS;
    }
    Long until = negative.get(endpoint(tcpAddress));
    if (until != null) {
      if (System.nanoTime() - until < 0) {
        return TransferMetrics.Fallback.NEGATIVE_CACHED;
      }
      negative.remove(endpoint(tcpAddress), until);
    }
    return null;
  }

  String noTransportReason() {
    return noTransport;
  }

  InetSocketAddress endpoint(InetSocketAddress tcpAddress) {
    return new InetSocketAddress(tcpAddress.getAddress(), conf.endpointPort(tcpAddress.getPort()));
  }

  /** Opens a stream to the DataNode whose TCP transfer address is {@code tcpAddress}. */
  ClientPipe open(InetSocketAddress tcpAddress, int timeoutMs) throws IOException {
    int wait = Math.min(timeoutMs <= 0 ? Integer.MAX_VALUE : timeoutMs, conf.connectTimeoutMs);
    try {
      return TransferHello.open(transport, endpoint(tcpAddress), tcpAddress.getPort(), role, wait,
          metrics, conf);
    } catch (TransferHello.HelloUnanswered e) {
      // Seen over rxe0 in the VM lane (a set-up right after the same client's previous stream
      // to that DataNode closed): the DataNode never saw the HELLO. One new connection, then
      // the usual failure.
      LOG.warn("HDFS transfer stream to {}: {}; trying once more on a new connection",
          endpoint(tcpAddress), e.getMessage());
      metrics.helloRetried();
      return TransferHello.open(transport, endpoint(tcpAddress), tcpAddress.getPort(), role, wait,
          metrics, conf);
    }
  }

  /**
   * Reaches {@code tcpAddress} over TCP for a while. Never when streams fail without the
   * transport ({@code STREAM_FAILS_WITHOUT_TRANSPORT_KEY}): there is no TCP to fall
   * back to, so every stream tries the transport, and a DataNode that was down a moment ago
   * (restarting for an upgrade, or a new one on a reused port) is reached as soon as it listens
   * again, as HDFS's restart wait and pipeline recovery expect.
   */
  void remember(InetSocketAddress tcpAddress, boolean busy) {
    if (conf.streamFailsWithoutTransport) {
      return;
    }
    long ms = busy ? BUSY_CACHE_MS : conf.negativeCacheMs;
    negative.put(endpoint(tcpAddress), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(ms));
  }
}
