/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.TransportConfigKeys;

/**
 * The keys of HDFS DataTransfer over the hpc transport, read once. The DataNode reads them in
 * {@link RdmaDataTransferPlugin}, clients and mirrors in {@link RdmaSocketFactory}.
 */
public final class TransferConf {
  /**
   * Whether HDFS block transfers use the transport (the plugin and factory still must be set):
   * {@code auto} (default) = where the transport is RDMA or the tcp transport was asked for
   * (the rule: {@link TransferUse}), {@code true} = always, {@code false} = never.
   */
  public static final String ENABLED_KEY = "dfs.hpc.datatransfer.enabled";

  /** The values of {@link #ENABLED_KEY}. */
  public enum Enabled { AUTO, TRUE, FALSE }

  /** No fallback to TCP: a stream that cannot use the transport fails, naming this key. */
  public static final String STRICT_KEY = "dfs.hpc.datatransfer.strict";
  /**
   * The transport endpoint of a DataNode is its TCP transfer port plus this. 0 (same number)
   * needs a transport with its own port space (verbs: rdma_cm); the tcp transport needs another
   * port, the same offset on every node.
   */
  public static final String PORT_OFFSET_KEY = "dfs.hpc.datatransfer.port.offset";
  /** The most a client waits for the transport connection and HELLO before using TCP. */
  public static final String CONNECT_TIMEOUT_KEY = "dfs.hpc.datatransfer.connect.timeout";
  /** How long a DataNode that could not be reached over the transport is reached over TCP. */
  public static final String NEGATIVE_CACHE_KEY = "dfs.hpc.datatransfer.negative.cache";
  /** The most stream bytes in one message (a 64 KiB packet with its header and checksums fits). */
  public static final String CHUNK_SIZE_KEY = "dfs.hpc.datatransfer.chunk.size";
  /** Upstream messages a DataNode lets a client have unconsumed (per stream). */
  public static final String WINDOW_KEY = "dfs.hpc.datatransfer.window";
  /** Downstream places (PULLs) a client keeps parked at the DataNode (per stream). */
  public static final String PULLS_KEY = "dfs.hpc.datatransfer.pulls";
  /** Accepted streams waiting for an xceiver thread before new ones are refused (BUSY). */
  public static final String ACCEPT_QUEUE_KEY = "dfs.hpc.datatransfer.accept.queue";
  /**
   * The thread waiting on a transfer stream (a client's reader or writer, a DataNode's xceiver,
   * a mirror's responder) reads the stream's connection itself where the transport can (tcp),
   * instead of the transport's thread reading and handing each message over: one wake-up per
   * message instead of two. Read by clients, mirrors and DataNodes alike.
   */
  public static final String CALLER_READS_KEY = "dfs.hpc.datatransfer.caller.reads";

  /** Not turned off ({@link Enabled#AUTO} or {@link Enabled#TRUE}). */
  final boolean enabled;
  final Enabled enabledValue;
  final boolean strict;
  final int portOffset;
  final int connectTimeoutMs;
  final long negativeCacheMs;
  final int chunk;
  private final int window;
  final int pulls;
  final int acceptQueue;
  final boolean callerReads;
  final long parkMaxMs;
  /** This process's {@code hadoop.hpc.transport.max.inflight}: requests a stream may have out. */
  final int maxInflight;

  private TransferConf(Configuration conf) {
    enabledValue = enabled(conf);
    enabled = enabledValue != Enabled.FALSE;
    strict = conf.getBoolean(STRICT_KEY, false);
    portOffset = conf.getInt(PORT_OFFSET_KEY, 0);
    connectTimeoutMs = (int) conf.getTimeDuration(CONNECT_TIMEOUT_KEY, 3000,
        TimeUnit.MILLISECONDS);
    negativeCacheMs = conf.getTimeDuration(NEGATIVE_CACHE_KEY, 60_000, TimeUnit.MILLISECONDS);
    chunk = (int) conf.getLongBytes(CHUNK_SIZE_KEY, 128 * 1024);
    window = conf.getInt(WINDOW_KEY, 0); // 0: the transport's default, window(boolean)
    pulls = conf.getInt(PULLS_KEY, 0); // 0: the transport's default, pulls(boolean)
    acceptQueue = conf.getInt(ACCEPT_QUEUE_KEY, 128);
    callerReads = conf.getBoolean(CALLER_READS_KEY, true);
    long io = conf.getTimeDuration(TransportConfigKeys.IO_TIMEOUT_KEY,
        TransportConfigKeys.IO_TIMEOUT_DEFAULT, TimeUnit.MILLISECONDS);
    parkMaxMs = Math.max(100, io / 3);
    maxInflight = conf.getInt(TransportConfigKeys.MAX_INFLIGHT_KEY,
        TransportConfigKeys.MAX_INFLIGHT_DEFAULT);
    check(portOffset >= -65535 && portOffset <= 65535, PORT_OFFSET_KEY, portOffset);
    check(connectTimeoutMs > 0, CONNECT_TIMEOUT_KEY, connectTimeoutMs);
    check(chunk >= 4096, CHUNK_SIZE_KEY, chunk);
    check(window >= 0, WINDOW_KEY, window);
    check(pulls >= 0, PULLS_KEY, pulls);
    if (pulls > 0 && pulls + (window > 0 ? window : VERBS_WINDOW) >= maxInflight) {
      // each parked PULL and each DATA message of the window is a request in flight
      throw new IllegalArgumentException(PULLS_KEY + "=" + pulls + " with " + WINDOW_KEY + "="
          + window + " leaves no room within " + TransportConfigKeys.MAX_INFLIGHT_KEY + "="
          + maxInflight + " (parked PULLs + window must stay below it): lower " + PULLS_KEY
          + " or raise " + TransportConfigKeys.MAX_INFLIGHT_KEY);
    }
    check(acceptQueue >= 1, ACCEPT_QUEUE_KEY, acceptQueue);
  }

  /** {@link #WINDOW_KEY} unset, where the transport does not send files itself (verbs). */
  private static final int VERBS_WINDOW = 4;

  /**
   * DATA messages a DataNode lets a client have unconsumed per stream: {@link #WINDOW_KEY} when
   * set, else 32 where the transport answers from files itself (tcp: the window is what a
   * socket's buffer is to stock TCP, up to 32 packets of the client's pool in flight; credit
   * then rides on the pipeline's acks instead of messages of its own: measured on a
   * replication-3 write pipeline, read and write calls per MiB 205 and 255 with 4, 132 and 209
   * with 32, stock's TCP 207 and 196; throughput 93-109 MB/s with 4, 138-173 with 32) and
   * {@value #VERBS_WINDOW} elsewhere (verbs: every request in flight takes a slot of the
   * DataNode's receive ring, at most 32 deep, which the parked PULLs share).
   */
  int window(boolean respondsFromFiles) {
    return window > 0 ? window : respondsFromFiles ? 32 : VERBS_WINDOW;
  }

  /**
   * PULLs a DataNode lets a client park per stream: {@link #PULLS_KEY} when set, else 16 where
   * the transport answers from files itself (tcp: a parked PULL holds no memory, its answer of
   * up to 4 packets goes by sendfile, so a stream holds at most 4 MiB of the client's pool; the
   * reader is then rarely left waiting: measured, context switches per 64 KiB packet 1.9 with
   * 8 PULLs of one packet each, 0.4 with 16 of 4) and 8 elsewhere (verbs: every request in
   * flight takes a slot of the peer's receive ring).
   */
  int pulls(boolean respondsFromFiles) {
    return pulls > 0 ? pulls : respondsFromFiles ? 16 : 8;
  }

  /**
   * PULLs a client parks of the {@code offered} ones on a stream whose DataNode grants
   * {@code window} DATA messages: as many as leave the window room within this client's
   * {@code max.inflight} (a DataNode configured otherwise does not stall the client's writes),
   * 0 when even one does not fit.
   */
  int pullsToPark(int offered, int window) {
    return Math.max(0, Math.min(offered, maxInflight - window - 1));
  }

  public static TransferConf from(Configuration conf) {
    return new TransferConf(conf);
  }

  /** {@code conf}'s settings with the transport turned off (clients of stock TCP). */
  static TransferConf stockTcp(Configuration conf) {
    Configuration off = new Configuration(conf);
    off.set(ENABLED_KEY, "false");
    return new TransferConf(off);
  }

  /** {@link #ENABLED_KEY} of {@code conf}; anything but auto/true/false is refused. */
  static Enabled enabled(Configuration conf) {
    String v = conf.getTrimmed(ENABLED_KEY, "auto");
    for (Enabled e : Enabled.values()) {
      if (e.name().equalsIgnoreCase(v)) {
        return e;
      }
    }
    throw new IllegalArgumentException(ENABLED_KEY + "=" + v + ": expected auto, true or false");
  }

  private static void check(boolean ok, String key, long value) {
    if (!ok) {
      throw new IllegalArgumentException(key + "=" + value + " is out of range");
    }
  }

  /** The transport port of a DataNode whose TCP transfer port is {@code xferPort}. */
  int endpointPort(int xferPort) {
    return xferPort + portOffset;
  }
}
