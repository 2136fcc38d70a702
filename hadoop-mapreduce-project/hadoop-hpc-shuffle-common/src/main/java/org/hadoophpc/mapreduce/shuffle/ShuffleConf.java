/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys.*;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.StorageUnit;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;

/**
 * The shuffle keys of {@link ShuffleConfigKeys}, read and validated once. A bad value throws
 * {@link IllegalArgumentException} naming the key.
 */
public final class ShuffleConf {
  // hpc-shuffle-default.xml documents the defaults (a test keeps it equal to the constants used
  // here); it is deliberately not a default resource: added after the *-site.xml files a JVM has
  // already loaded, it would override the site's settings of these keys in every Configuration.

  static {
    ShuffleConfigKeys.addDeprecations(); // before anything here reads a key
  }

  private final int port;
  private final int portRange;
  private final String bindHost;
  private final int serverThreads;
  private final int serverIoThreads;
  private final int serverQueue;
  private final int busyMaxRetries;
  private final long prefetchMax;
  private final int chunkSize;
  private final int fetchInflight;
  private final boolean reducerFailsWithoutHpc;
  private final boolean callerReads;
  private final boolean sendfile;
  private final boolean tcpFallback;
  private final boolean sslVerbsPlaintext;
  private final int eventsInterval;
  private final int eventsBudget;
  private final ServiceLimits limits;

  private ShuffleConf(Configuration conf) {
    port = conf.getInt(PORT_KEY, PORT_DEFAULT);
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(PORT_KEY + "=" + port + " is not a port number (0: the"
          + " NodeManager's mapreduce.shuffle.port + 1)");
    }
    portRange = atLeast(PORT_RANGE_KEY, conf.getInt(PORT_RANGE_KEY, PORT_RANGE_DEFAULT), 1);
    if (portRange > 1024) {
      throw new IllegalArgumentException(PORT_RANGE_KEY + "=" + portRange + " is more than 1024");
    }
    if (port + portRange - 1 > 65535) {
      throw new IllegalArgumentException(PORT_KEY + "=" + port + " with " + PORT_RANGE_KEY + "="
          + portRange + " goes past port 65535");
    }
    bindHost = conf.getTrimmed(BIND_HOST_KEY, BIND_HOST_DEFAULT);
    serverThreads = atLeast(SERVER_THREADS_KEY,
        conf.getInt(SERVER_THREADS_KEY, SERVER_THREADS_DEFAULT), 1);
    serverIoThreads = atLeast(SERVER_IO_THREADS_KEY,
        conf.getInt(SERVER_IO_THREADS_KEY, SERVER_IO_THREADS_DEFAULT), 0);
    serverQueue = atLeast(SERVER_QUEUE_KEY, conf.getInt(SERVER_QUEUE_KEY, SERVER_QUEUE_DEFAULT), 1);
    busyMaxRetries = atLeast(BUSY_MAX_RETRIES_KEY,
        conf.getInt(BUSY_MAX_RETRIES_KEY, BUSY_MAX_RETRIES_DEFAULT), 0);
    prefetchMax = bytes(conf, PREFETCH_MAX_KEY, PREFETCH_MAX_DEFAULT);
    if (prefetchMax < 0) {
      throw new IllegalArgumentException(PREFETCH_MAX_KEY + "=" + conf.get(PREFETCH_MAX_KEY)
          + " must not be negative");
    }
    if (conf.getTrimmed(CHUNK_SIZE_KEY, CHUNK_SIZE_DEFAULT).isEmpty()) {
      chunkSize = 0; // by transport
    } else {
      long chunk = bytes(conf, CHUNK_SIZE_KEY, CHUNK_SIZE_DEFAULT);
      if (chunk < 4096 || chunk > (1 << 30)) {
        throw new IllegalArgumentException(CHUNK_SIZE_KEY + "=" + conf.get(CHUNK_SIZE_KEY)
            + " must be between 4k and 1g");
      }
      chunkSize = (int) chunk;
    }
    String inflight = conf.getTrimmed(FETCH_INFLIGHT_KEY, FETCH_INFLIGHT_DEFAULT);
    if (inflight.isEmpty()) {
      fetchInflight = 0; // by transport
    } else {
      int n;
      try {
        n = Integer.parseInt(inflight);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(FETCH_INFLIGHT_KEY + "=" + inflight
            + " is not a number", e);
      }
      fetchInflight = atLeast(FETCH_INFLIGHT_KEY, n, 1);
    }
    reducerFailsWithoutHpc = conf.getBoolean(REDUCER_FAILS_WITHOUT_HPC_KEY,
        REDUCER_FAILS_WITHOUT_HPC_DEFAULT);
    sendfile = conf.getBoolean(SENDFILE_KEY, SENDFILE_DEFAULT);
    callerReads = conf.getBoolean(CALLER_READS_KEY, CALLER_READS_DEFAULT);
    tcpFallback = conf.getBoolean(TCP_FALLBACK_KEY, TCP_FALLBACK_DEFAULT);
    sslVerbsPlaintext = conf.getBoolean(SSL_VERBS_PLAINTEXT_KEY, SSL_VERBS_PLAINTEXT_DEFAULT);
    eventsInterval = atLeast(EVENTS_INTERVAL_KEY,
        conf.getInt(EVENTS_INTERVAL_KEY, EVENTS_INTERVAL_DEFAULT), 1);
    eventsBudget = atLeast(EVENTS_AM_BUDGET_KEY,
        conf.getInt(EVENTS_AM_BUDGET_KEY, EVENTS_AM_BUDGET_DEFAULT), 1);
    limits = new ServiceLimits(
        atLeast(SERVER_SESSIONS_MAX_KEY, conf.getInt(SERVER_SESSIONS_MAX_KEY,
            SERVER_SESSIONS_MAX_DEFAULT), 1),
        atLeast(SERVER_SESSIONS_PER_JOB_MAX_KEY, conf.getInt(SERVER_SESSIONS_PER_JOB_MAX_KEY,
            SERVER_SESSIONS_PER_JOB_MAX_DEFAULT), 1),
        atLeast(SERVER_FILES_MAX_KEY, conf.getInt(SERVER_FILES_MAX_KEY,
            SERVER_FILES_MAX_DEFAULT), 1),
        atLeast(SERVER_FILES_PER_JOB_MAX_KEY, conf.getInt(SERVER_FILES_PER_JOB_MAX_KEY,
            SERVER_FILES_PER_JOB_MAX_DEFAULT), 1),
        atLeast(SERVER_OPEN_MAPS_MAX_KEY, Math.min(conf.getInt(SERVER_OPEN_MAPS_MAX_KEY,
            SERVER_OPEN_MAPS_MAX_DEFAULT), Wire.MAX_MAPS), 1),
        atLeast(SERVER_UNTRUSTED_MAX_KEY, conf.getInt(SERVER_UNTRUSTED_MAX_KEY,
            SERVER_UNTRUSTED_MAX_DEFAULT), 1),
        atLeast(SERVER_UNTRUSTED_PER_ADDRESS_MAX_KEY, conf.getInt(
            SERVER_UNTRUSTED_PER_ADDRESS_MAX_KEY, SERVER_UNTRUSTED_PER_ADDRESS_MAX_DEFAULT), 1));
  }

  /** Reads and validates {@code conf}. */
  public static ShuffleConf from(Configuration conf) {
    return new ShuffleConf(conf);
  }

  /** A size: plain bytes ("65536") or with a unit ("64k", "1m", "2g"). */
  private static long bytes(Configuration conf, String key, String dflt) {
    String v = conf.getTrimmed(key, dflt);
    try {
      if (v.matches("-?[0-9]+")) {
        return Long.parseLong(v);
      }
      return (long) conf.getStorageSize(key, dflt, StorageUnit.BYTES);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(key + "=" + v + " is not a size (bytes, or with a unit"
          + " such as 64k, 1m, 2g)", e);
    }
  }

  private static int atLeast(String key, int v, int min) {
    if (v < min) {
      throw new IllegalArgumentException(key + "=" + v + " must be at least " + min);
    }
    return v;
  }

  public int port() {
    return port;
  }

  public int portRange() {
    return portRange;
  }

  /**
   * The ports the service of a NodeManager whose stock shuffle listens on {@code stockPort} may
   * hold, in the order the service tries to bind them and reducers try to reach them: from
   * {@link ShuffleConfigKeys#PORT_KEY}, or from {@code stockPort + 1} when that is 0; never
   * {@code stockPort} itself, never past 65535.
   */
  public int[] ports(int stockPort) {
    int first = port > 0 ? port : stockPort + 1;
    int[] out = new int[portRange];
    int n = 0;
    for (int p = first; n < portRange && p <= 65535; p++) {
      if (p != stockPort && p > 0) {
        out[n++] = p;
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  /** The ports as a reader would write them ("13563" or "13563-13570"). */
  public String describePorts(int stockPort) {
    int[] p = ports(stockPort);
    if (p.length == 0) {
      return "(none below 65536)";
    }
    return p.length == 1 ? Integer.toString(p[0]) : p[0] + "-" + p[p.length - 1];
  }

  /** Plaintext over verbs is allowed while stock's shuffle is on TLS. */
  public boolean sslVerbsPlaintext() {
    return sslVerbsPlaintext;
  }

  public String bindHost() {
    return bindHost;
  }

  public int serverThreads() {
    return serverThreads;
  }

  /** Event threads of the service's transport; 0: {@code hadoop.hpc.transport.io.threads}. */
  public int serverIoThreads() {
    return serverIoThreads;
  }

  /** BUSY answers in a row from a host a reducer waits out before it counts failed fetches. */
  public int busyMaxRetries() {
    return busyMaxRetries;
  }

  /** The service's bounds on sessions, files and connections not yet trusted. */
  public ServiceLimits limits() {
    return limits;
  }

  public int serverQueue() {
    return serverQueue;
  }

  public long prefetchMax() {
    return prefetchMax;
  }

  /**
   * Bytes per read request over {@code transport} ("tcp", "verbs"), capped at what one
   * transport message can carry: the configured size, else the transport's default.
   */
  public int chunkSize(String transport, int maxMessageSize) {
    int c = chunkSize > 0 ? chunkSize
        : "tcp".equals(transport) ? CHUNK_SIZE_TCP : CHUNK_SIZE_VERBS;
    return Math.min(c, maxMessageSize);
  }

  /** Read requests in flight per map output over {@code transport}: configured, else by it. */
  public int fetchInflight(String transport) {
    return fetchInflight > 0 ? fetchInflight
        : "tcp".equals(transport) ? FETCH_INFLIGHT_TCP : FETCH_INFLIGHT_VERBS;
  }

  /** Reducer: fail rather than use stock's shuffle ({@code REDUCER_FAILS_WITHOUT_HPC_KEY}). */
  public boolean reducerFailsWithoutHpc() {
    return reducerFailsWithoutHpc;
  }

  /** NodeManager: answer reads with {@code Responder.respondFile} where the transport can. */
  public boolean sendfile() {
    return sendfile;
  }

  /** Reducer: fetchers read their connections themselves where the transport allows it. */
  public boolean callerReads() {
    return callerReads;
  }

  /** Both sides: over verbs, the service also listens over tcp and reducers use it per host. */
  public boolean tcpFallback() {
    return tcpFallback;
  }

  /**
   * Reducer: milliseconds between event polls for a job with {@code reducers} reducers: the
   * configured interval, stretched so the job's reducers together stay within the AM budget,
   * and never more than stock's 1000 ms (a configured interval above it is kept as is).
   */
  public int eventsIntervalMs(int reducers) {
    long share = ((long) Math.max(1, reducers) * 1000 + eventsBudget - 1) / eventsBudget;
    long stretched = Math.min(Math.max(share, eventsInterval), Math.max(1000, eventsInterval));
    return (int) stretched;
  }

  @Override
  public String toString() {
    return "port=" + (port == 0 ? "stock+1" : Integer.toString(port))
        + (portRange > 1 ? "+" + (portRange - 1) : "") + " chunk="
        + (chunkSize > 0 ? Integer.toString(chunkSize) : "by-transport") + " inflight="
        + (fetchInflight > 0 ? Integer.toString(fetchInflight) : "by-transport")
        + " prefetch=" + prefetchMax + " reducer.fails.without.hpc=" + reducerFailsWithoutHpc
        + " sendfile=" + sendfile + " tcp.fallback=" + tcpFallback + " server.io.threads="
        + serverIoThreads + " events="
        + eventsInterval + "ms/" + eventsBudget + "/s";
  }
}
