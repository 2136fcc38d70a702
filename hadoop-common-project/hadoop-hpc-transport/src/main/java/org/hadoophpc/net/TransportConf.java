/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.*;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.StorageUnit;

/**
 * The transport configuration, read once from a Hadoop {@link Configuration} and validated;
 * hot paths use this immutable view, never {@code Configuration.get*}. Thread-safe.
 */
public final class TransportConf {
  // hpc-default.xml documents the defaults (a test keeps it equal to the constants used here); it
  // is deliberately not a default resource: added after the *-site.xml files a JVM has already
  // loaded, it would override the site's settings of these keys in every Configuration.

  static {
    TransportConfigKeys.addDeprecations(); // before anything here reads a key
  }

  /**
   * The smallest {@code max.message.size}: the verbs transport's eager receive slots are pool
   * chunks of this size (8 KiB), so the pool must hand out chunks that large.
   */
  public static final int MIN_MAX_MESSAGE_SIZE = 8192;

  /** What the configuration asks for. */
  public enum Kind {
    AUTO, VERBS, TCP
  }

  /** The link layer HiBD's keys ask for; ANY when not said. */
  public enum LinkLayer {
    ANY, INFINIBAND, ROCE
  }

  private final Kind kind;
  private final LinkLayer linkLayer;
  private final boolean openFailsWithoutVerbs;
  private final String device;
  private final int port;
  private final long connectTimeoutMs;
  private final long ioTimeoutMs;
  private final long bufferPoolMax;
  private final int slabSize;
  private final int maxMessageSize;
  private final int maxInflight;
  private final int ioThreads;
  private final String tcpLocalDir;

  private TransportConf(Configuration conf) {
    String t = conf.getTrimmed(TRANSPORT_KEY, TRANSPORT_DEFAULT);
    boolean ib = conf.getBoolean(HIBD_IB_ENABLED_KEY, HIBD_IB_ENABLED_DEFAULT);
    boolean roce = conf.getBoolean(HIBD_ROCE_ENABLED_KEY, HIBD_ROCE_ENABLED_DEFAULT);
    if (ib && roce) {
      throw new IllegalArgumentException(HIBD_IB_ENABLED_KEY + " and " + HIBD_ROCE_ENABLED_KEY
          + " are both true; set one (InfiniBand or RoCE)");
    }
    if (t.isEmpty()) {
      kind = ib || roce ? Kind.VERBS : Kind.AUTO;
    } else {
      try {
        kind = Kind.valueOf(t.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(TRANSPORT_KEY + "=" + t
            + " is not one of auto, verbs, tcp", e);
      }
    }
    linkLayer = ib ? LinkLayer.INFINIBAND : roce ? LinkLayer.ROCE : LinkLayer.ANY;
    openFailsWithoutVerbs = conf.getBoolean(OPEN_FAILS_WITHOUT_VERBS_KEY,
        OPEN_FAILS_WITHOUT_VERBS_DEFAULT);
    String dev = conf.getTrimmed(VERBS_DEVICE_KEY, VERBS_DEVICE_DEFAULT);
    if (dev.isEmpty()) {
      dev = conf.getTrimmed(HIBD_DEVICE_KEY, HIBD_DEVICE_DEFAULT);
    }
    device = dev;
    port = nonNegative(VERBS_PORT_KEY, conf.getInt(VERBS_PORT_KEY, VERBS_PORT_DEFAULT));
    connectTimeoutMs = positive(CONNECT_TIMEOUT_KEY,
        conf.getTimeDuration(CONNECT_TIMEOUT_KEY, CONNECT_TIMEOUT_DEFAULT, TimeUnit.MILLISECONDS));
    ioTimeoutMs = positive(IO_TIMEOUT_KEY,
        conf.getTimeDuration(IO_TIMEOUT_KEY, IO_TIMEOUT_DEFAULT, TimeUnit.MILLISECONDS));
    bufferPoolMax = positive(BUFFER_POOL_MAX_KEY, (long) conf.getStorageSize(BUFFER_POOL_MAX_KEY,
        BUFFER_POOL_MAX_DEFAULT, StorageUnit.BYTES));
    slabSize = intSize(conf, BUFFER_SLAB_SIZE_KEY, BUFFER_SLAB_SIZE_DEFAULT);
    maxMessageSize = intSize(conf, MAX_MESSAGE_SIZE_KEY, MAX_MESSAGE_SIZE_DEFAULT);
    if (Integer.bitCount(maxMessageSize) != 1 || maxMessageSize < MIN_MAX_MESSAGE_SIZE) {
      throw new IllegalArgumentException(MAX_MESSAGE_SIZE_KEY + "=" + maxMessageSize
          + " must be a power of two of at least " + MIN_MAX_MESSAGE_SIZE + " bytes (8k)");
    }
    if (bufferPoolMax < maxMessageSize) {
      throw new IllegalArgumentException(BUFFER_POOL_MAX_KEY + "=" + bufferPoolMax
          + " is smaller than one message (" + MAX_MESSAGE_SIZE_KEY + "=" + maxMessageSize + ")");
    }
    maxInflight = (int) positive(MAX_INFLIGHT_KEY, conf.getInt(MAX_INFLIGHT_KEY,
        MAX_INFLIGHT_DEFAULT));
    ioThreads = (int) positive(IO_THREADS_KEY, conf.getInt(IO_THREADS_KEY, IO_THREADS_DEFAULT));
    String local = conf.getTrimmed(TCP_LOCAL_DIR_KEY); // set values are expanded, defaults not
    if (local == null) {
      String user = System.getProperty("user.name");
      local = user == null || user.isEmpty() || user.contains("/") ? ""
          : TCP_LOCAL_DIR_DEFAULT.replace("${user.name}", user);
    }
    tcpLocalDir = local;
  }

  /** Reads and validates; a bad value throws {@link IllegalArgumentException} naming the key. */
  public static TransportConf from(Configuration conf) {
    return new TransportConf(conf);
  }

  private static long positive(String key, long v) {
    if (v <= 0) {
      throw new IllegalArgumentException(key + "=" + v + " must be positive");
    }
    return v;
  }

  private static int nonNegative(String key, int v) {
    if (v < 0) {
      throw new IllegalArgumentException(key + "=" + v + " must not be negative");
    }
    return v;
  }

  private static int intSize(Configuration conf, String key, String dflt) {
    double v = conf.getStorageSize(key, dflt, StorageUnit.BYTES);
    if (v <= 0 || v > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(key + "=" + conf.get(key) + " must be between 1 byte"
          + " and 2g");
    }
    return (int) v;
  }

  public Kind kind() {
    return kind;
  }

  public LinkLayer linkLayer() {
    return linkLayer;
  }

  /** {@link TransportConfigKeys#OPEN_FAILS_WITHOUT_VERBS_KEY}. */
  public boolean openFailsWithoutVerbs() {
    return openFailsWithoutVerbs;
  }

  /** The configured device name, empty when any will do. */
  public String device() {
    return device;
  }

  public int port() {
    return port;
  }

  public long connectTimeoutMs() {
    return connectTimeoutMs;
  }

  public long ioTimeoutMs() {
    return ioTimeoutMs;
  }

  public long bufferPoolMax() {
    return bufferPoolMax;
  }

  public int slabSize() {
    return slabSize;
  }

  public int maxMessageSize() {
    return maxMessageSize;
  }

  public int maxInflight() {
    return maxInflight;
  }

  /** tcp: where listeners bind their local sockets; empty (or unresolved) when off. */
  public String tcpLocalDir() {
    return tcpLocalDir;
  }

  public int ioThreads() {
    return ioThreads;
  }

  /** A pool sized by this configuration. */
  public BufferPool newBufferPool(BufferPool.MemoryRegistrar registrar) {
    return new BufferPool(bufferPoolMax, slabSize, maxMessageSize, registrar);
  }

  @Override
  public String toString() {
    return "TransportConf[kind=" + kind + ", linkLayer=" + linkLayer
        + ", openFailsWithoutVerbs=" + openFailsWithoutVerbs + ", device='" + device
        + "', port=" + port + ", connectTimeoutMs=" + connectTimeoutMs
        + ", ioTimeoutMs=" + ioTimeoutMs + ", bufferPoolMax=" + bufferPoolMax + ", slabSize="
        + slabSize + ", maxMessageSize=" + maxMessageSize + ", maxInflight=" + maxInflight
        + ", ioThreads=" + ioThreads + "]";
  }
}
