/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.hadoophpc.hdfs.transfer.TransferConfigKeys.*;

import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.util.StringUtils.TraditionalBinaryPrefix;
import org.hadoophpc.net.TransportConfigKeys;

/**
 * The keys of HDFS DataTransfer over the hpc transport ({@link TransferConfigKeys}), read once.
 * The DataNode reads them in {@link RdmaDataTransferPlugin}, clients and mirrors in
 * {@link RdmaSocketFactory}. Immutable.
 */
public final class TransferConf {
  // hpc-hdfs-default.xml documents the defaults (a test keeps it equal to the constants used
  // here); it is deliberately not a default resource: added after the *-site.xml files a JVM has
  // already loaded, it would override the site's settings of these keys in every Configuration.

  static {
    TransferConfigKeys.addDeprecations(); // before anything here reads a key
  }

  /** The values of {@link TransferConfigKeys#ENABLED_KEY}. */
  public enum Enabled { AUTO, TRUE, FALSE }

  /** Not turned off ({@link Enabled#AUTO} or {@link Enabled#TRUE}). */
  final boolean enabled;
  final Enabled enabledValue;
  /** {@link TransferConfigKeys#STREAM_FAILS_WITHOUT_TRANSPORT_KEY}. */
  final boolean streamFailsWithoutTransport;
  final int portOffset;
  final int connectTimeoutMs;
  /** {@link TransferConfigKeys#HELLO_TIMEOUT_KEY}. */
  final long helloTimeoutMs;
  /** {@link TransferConfigKeys#MAX_CONNECTIONS_PER_ADDRESS_KEY}. */
  final int maxConnectionsPerAddress;
  final long negativeCacheMs;
  final int chunk;
  private final int window;
  final int pulls;
  final int acceptQueue;
  final boolean callerReads;
  final long parkMaxMs;
  /**
   * HDFS skips SASL towards privileged transfer ports with these settings
   * ({@link PrivilegedPortCheck#trustsPrivilegedPorts}): such DataNodes are reached over TCP.
   */
  final boolean trustsPrivilegedPorts;
  /** This process's {@code hadoop.hpc.transport.max.inflight}: requests a stream may have out. */
  final int maxInflight;

  private TransferConf(Configuration conf) {
    enabledValue = enabled(conf);
    enabled = enabledValue != Enabled.FALSE;
    streamFailsWithoutTransport = conf.getBoolean(STREAM_FAILS_WITHOUT_TRANSPORT_KEY,
        STREAM_FAILS_WITHOUT_TRANSPORT_DEFAULT);
    portOffset = conf.getInt(PORT_OFFSET_KEY, PORT_OFFSET_DEFAULT);
    connectTimeoutMs = (int) conf.getTimeDuration(CONNECT_TIMEOUT_KEY, CONNECT_TIMEOUT_DEFAULT,
        TimeUnit.MILLISECONDS);
    helloTimeoutMs = conf.getTimeDuration(HELLO_TIMEOUT_KEY, HELLO_TIMEOUT_DEFAULT,
        TimeUnit.MILLISECONDS);
    maxConnectionsPerAddress = conf.getInt(MAX_CONNECTIONS_PER_ADDRESS_KEY,
        MAX_CONNECTIONS_PER_ADDRESS_DEFAULT);
    negativeCacheMs = conf.getTimeDuration(NEGATIVE_CACHE_KEY, NEGATIVE_CACHE_DEFAULT,
        TimeUnit.MILLISECONDS);
    // as Configuration.getLongBytes, with the default written as the XML writes it
    chunk = (int) TraditionalBinaryPrefix.string2long(
        conf.getTrimmed(CHUNK_SIZE_KEY, CHUNK_SIZE_DEFAULT));
    window = conf.getInt(WINDOW_KEY, WINDOW_DEFAULT); // 0: the transport's, window(boolean)
    pulls = conf.getInt(PULLS_KEY, PULLS_DEFAULT); // 0: the transport's, pulls(boolean)
    acceptQueue = conf.getInt(ACCEPT_QUEUE_KEY, ACCEPT_QUEUE_DEFAULT);
    callerReads = conf.getBoolean(CALLER_READS_KEY, CALLER_READS_DEFAULT);
    long io = conf.getTimeDuration(TransportConfigKeys.IO_TIMEOUT_KEY,
        TransportConfigKeys.IO_TIMEOUT_DEFAULT, TimeUnit.MILLISECONDS);
    parkMaxMs = Math.max(100, io / 3);
    trustsPrivilegedPorts = PrivilegedPortCheck.trustsPrivilegedPorts(conf);
    maxInflight = conf.getInt(TransportConfigKeys.MAX_INFLIGHT_KEY,
        TransportConfigKeys.MAX_INFLIGHT_DEFAULT);
    check(portOffset >= -65535 && portOffset <= 65535, PORT_OFFSET_KEY, portOffset);
    check(connectTimeoutMs > 0, CONNECT_TIMEOUT_KEY, connectTimeoutMs);
    check(helloTimeoutMs > 0, HELLO_TIMEOUT_KEY, helloTimeoutMs);
    check(maxConnectionsPerAddress >= 0, MAX_CONNECTIONS_PER_ADDRESS_KEY,
        maxConnectionsPerAddress);
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

  /** {@code WINDOW_KEY} unset, where the transport does not send files itself (verbs). */
  private static final int VERBS_WINDOW = 4;

  /**
   * DATA messages a DataNode lets a client have unconsumed per stream: {@code WINDOW_KEY} when
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
   * PULLs a DataNode lets a client park per stream: {@code PULLS_KEY} when set, else 16 where
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

  /** {@code ENABLED_KEY} of {@code conf}; anything but auto/true/false is refused. */
  static Enabled enabled(Configuration conf) {
    String v = conf.getTrimmed(ENABLED_KEY, ENABLED_DEFAULT);
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
