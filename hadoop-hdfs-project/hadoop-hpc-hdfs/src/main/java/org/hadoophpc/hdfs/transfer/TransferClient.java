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
 * per process and distinct settings for clients ({@link #shared(Configuration)}), one per
 * DataNode for its mirrors.
 *
 * <p>Lifetime of a shared client's transport: the process keeps the clients of its
 * {@value #MAX_SHARED} most recently asked-for settings; an older one is retired, and its
 * transport closes with its last open stream (each stream holds a reference from its HELLO
 * until its connection closed). Without the bound a process that builds many configurations
 * (a long-lived service, a test JVM) would keep a transport, its threads and memory for each.
 */
final class TransferClient {
  private static final Logger LOG = LoggerFactory.getLogger(TransferClient.class);
  private static final long BUSY_CACHE_MS = 1000;
  /** Shared clients kept before the least recently asked-for one is retired. */
  static final int MAX_SHARED = 8;
  /** Shared clients by settings, least recently asked-for first (guarded by itself). */
  private static final java.util.LinkedHashMap<String, TransferClient> SHARED =
      new java.util.LinkedHashMap<>(16, 0.75f, true);

  final TransferConf conf;
  final TransferMetrics metrics;
  final TransferMetrics.Role role;
  private final Transport transport;
  private final String noTransport;
  private final Map<InetSocketAddress, Long> negative = new ConcurrentHashMap<>();
  /** Closes the transport at JVM exit, when this client did not close it before (or null). */
  private Runnable shutdownHook;
  // Guarded by this: streams holding the transport, and the lifecycle.
  private int streams;
  private boolean retired;
  private boolean transportClosed;

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
        + " " + new java.util.TreeMap<>(c.getPropsWithPrefix(TransportConfigKeys.TRANSPORT_KEY))
        + " trustsPrivilegedPorts=" + PrivilegedPortCheck.trustsPrivilegedPorts(c);
    TransferClient got;
    TransferClient evicted = null;
    synchronized (SHARED) {
      got = SHARED.get(settings);
      if (got != null && got.retired()) { // retired by hand (tests): settings asked for again
        SHARED.remove(settings);
        got = null;
      }
      if (got == null) {
        got = create(c);
        SHARED.put(settings, got);
        if (SHARED.size() > MAX_SHARED) {
          java.util.Iterator<TransferClient> eldest = SHARED.values().iterator();
          evicted = eldest.next();
          eldest.remove();
        }
      }
    }
    if (evicted != null) {
      evicted.retire();
    }
    return got;
  }

  /** Shared clients kept now (tests). */
  static int sharedCount() {
    synchronized (SHARED) {
      return SHARED.size();
    }
  }

  /**
   * Takes a reference to the transport for one stream; false when it is closed (the client was
   * retired meanwhile: ask {@link TransferUse#client} again). {@link #release()} gives it back.
   */
  synchronized boolean acquire() {
    if (transportClosed) {
      return false;
    }
    streams++;
    return true;
  }

  /** A stream no longer needs the transport; a retired client's last one closes it. */
  void release() {
    synchronized (this) {
      if (streams <= 0) {
        throw new IllegalStateException("transfer client released more often than acquired");
      }
      if (--streams > 0 || !retired || transportClosed) {
        return;
      }
      transportClosed = true;
    }
    closeTransport();
  }

  /** No longer handed out: the transport closes now, or with its last stream. */
  void retire() {
    synchronized (this) {
      retired = true;
      if (streams > 0 || transportClosed) {
        return;
      }
      transportClosed = true;
    }
    closeTransport();
  }

  /** Retired: whoever holds this client should ask {@link TransferUse#client} for a new one. */
  synchronized boolean retired() {
    return retired;
  }

  private void closeTransport() {
    if (transport == null) {
      return;
    }
    LOG.info("closing the HDFS transfer transport of settings no longer in use");
    if (shutdownHook != null) {
      try {
        ShutdownHookManager.get().removeShutdownHook(shutdownHook);
      } catch (IllegalStateException e) {
        // the JVM is exiting: the hook closes it as well (close is idempotent)
      }
    }
    try {
      transport.close();
    } catch (IOException e) {
      LOG.debug("closing the HDFS transfer transport", e);
    }
  }

  private static TransferClient create(Configuration c) {
    TransferConf conf = TransferConf.from(c);
    Transport t = null;
    Runnable hook = null;
    String why = null;
    if (!conf.enabled) {
      why = TransferConfigKeys.ENABLED_KEY + "=false";
    } else {
      try {
        t = TransportFactory.create(c);
        Transport closing = t;
        hook = () -> {
          try {
            closing.close();
          } catch (IOException e) {
            LOG.debug("closing the HDFS transfer transport", e);
          }
        };
        ShutdownHookManager.get().addShutdownHook(hook, 5);
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
        ShutdownHookManager.get().removeShutdownHook(hook);
        hook = null;
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
    TransferClient client = new TransferClient(conf, t, why, TransferMetrics.client(),
        TransferMetrics.Role.CLIENT);
    client.shutdownHook = hook;
    return client;
  }

  /** Why streams go over TCP before any attempt, or null when the transport may be tried. */
  TransferMetrics.Fallback precheck(InetSocketAddress tcpAddress, boolean bound) {
    if (!conf.enabled) {
      return TransferMetrics.Fallback.DISABLED;
    }
    if (transport == null) {
      return TransferMetrics.Fallback.NO_TRANSPORT;
    }
    if (PrivilegedPortCheck.clientProblem(conf.trustsPrivilegedPorts, tcpAddress.getPort())
        != null) {
      return TransferMetrics.Fallback.PRIVILEGED_PORT;
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

  /** The transport streams use, null for stock TCP (tests). */
  Transport transport() {
    return transport;
  }

  String noTransportReason() {
    return noTransport;
  }

  InetSocketAddress endpoint(InetSocketAddress tcpAddress) {
    return new InetSocketAddress(tcpAddress.getAddress(), conf.endpointPort(tcpAddress.getPort()));
  }

  /** Opens a stream to the DataNode whose TCP transfer address is {@code tcpAddress}. */
  ClientPipe open(InetSocketAddress tcpAddress, int timeoutMs) throws IOException {
    if (!acquire()) {
      throw new TransferRefusedException(TransferError.STOPPING, "the transfer transport of"
          + " these settings was closed (retired)");
    }
    boolean ok = false;
    try {
      ClientPipe p = hello(tcpAddress, timeoutMs);
      p.whenClosed(this::release);
      ok = true;
      return p;
    } finally {
      if (!ok) {
        release();
      }
    }
  }

  private ClientPipe hello(InetSocketAddress tcpAddress, int timeoutMs) throws IOException {
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
