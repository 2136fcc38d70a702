/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configuration.DeprecationDelta;

/**
 * Configuration keys of the transport layer. Every key is also in {@code hpc-default.xml} in
 * this jar, the reference for users ({@code TransportConfigKeysTest} keeps the two in step); it
 * is not a default resource. Read once into {@link TransportConf}, which registers the
 * deprecated names ({@link #addDeprecations()}) before it reads.
 */
public final class TransportConfigKeys {
  private TransportConfigKeys() {
  }

  /**
   * Which transport: {@code auto} (verbs when a usable RDMA device exists, else tcp),
   * {@code verbs} (RDMA required; falls back to tcp with a logged reason unless
   * {@link #OPEN_FAILS_WITHOUT_VERBS_KEY}), or {@code tcp}.
   */
  public static final String TRANSPORT_KEY = "hadoop.hpc.transport";
  /** Empty: auto, or verbs when a HiBD key asks for it. */
  public static final String TRANSPORT_DEFAULT = "";

  /**
   * With verbs asked for ({@code hadoop.hpc.transport=verbs}, or a HiBD key) but unusable (no
   * device, no active port, the library missing): true makes opening the transport fail with
   * the reason; false (the default) opens tcp instead and logs why.
   */
  public static final String OPEN_FAILS_WITHOUT_VERBS_KEY =
      "hadoop.hpc.transport.open.fails.without.verbs";
  public static final boolean OPEN_FAILS_WITHOUT_VERBS_DEFAULT = false;
  /** The earlier name of {@link #OPEN_FAILS_WITHOUT_VERBS_KEY}, still read. */
  public static final String OPEN_FAILS_WITHOUT_VERBS_DEPRECATED_KEY =
      "hadoop.hpc.transport.strict";

  /** HiBD: native InfiniBand verbs. true acts as {@code hadoop.hpc.transport=verbs} on IB. */
  public static final String HIBD_IB_ENABLED_KEY = "hadoop.ib.enabled";
  public static final boolean HIBD_IB_ENABLED_DEFAULT = false;
  /**
   * HiBD: RDMA over Converged Ethernet. true acts as {@code hadoop.hpc.transport=verbs} on RoCE.
   */
  public static final String HIBD_ROCE_ENABLED_KEY = "hadoop.roce.enabled";
  public static final boolean HIBD_ROCE_ENABLED_DEFAULT = false;

  /** RDMA device by name (e.g. mlx5_0, rxe0); empty picks the first with an active port. */
  public static final String VERBS_DEVICE_KEY = "hadoop.hpc.transport.verbs.device";
  /** HiBD's spelling of {@link #VERBS_DEVICE_KEY}; ours wins when both are set. */
  public static final String HIBD_DEVICE_KEY = "hadoop.rdma.dev.name";
  public static final String HIBD_DEVICE_DEFAULT = "";
  public static final String VERBS_DEVICE_DEFAULT = "";

  /** Port of the device (1-based); 0 picks the first active one. */
  public static final String VERBS_PORT_KEY = "hadoop.hpc.transport.verbs.port";
  public static final int VERBS_PORT_DEFAULT = 0;

  /** Time to establish a connection (rdma_cm address/route resolution + accept, or TCP). */
  public static final String CONNECT_TIMEOUT_KEY = "hadoop.hpc.transport.connect.timeout";
  public static final String CONNECT_TIMEOUT_DEFAULT = "10s";

  /** Time any one operation (request/response, read, write) may take before it fails. */
  public static final String IO_TIMEOUT_KEY = "hadoop.hpc.transport.io.timeout";
  public static final String IO_TIMEOUT_DEFAULT = "60s";

  /**
   * Upper bound of registered (pinned, for verbs) buffer memory per transport: every buffer,
   * and for verbs the connections' receive rings too (together at most a quarter of it; about
   * 264 KiB per connection at the default max.inflight). Verbs needs room for at least a ring
   * of 4 receives (about 40 KiB) in that quarter.
   */
  public static final String BUFFER_POOL_MAX_KEY = "hadoop.hpc.transport.buffer.pool.max";
  public static final String BUFFER_POOL_MAX_DEFAULT = "256m";

  /** Size of the slabs the pool registers at once; larger means fewer registrations. */
  public static final String BUFFER_SLAB_SIZE_KEY = "hadoop.hpc.transport.buffer.slab.size";
  public static final String BUFFER_SLAB_SIZE_DEFAULT = "4m";

  /** Largest message or one-sided transfer; a power of two, at least 8k (verbs receive slots). */
  public static final String MAX_MESSAGE_SIZE_KEY = "hadoop.hpc.transport.max.message.size";
  public static final String MAX_MESSAGE_SIZE_DEFAULT = "16m";

  /** Operations a connection keeps in flight before calls return null (back-pressure). */
  public static final String MAX_INFLIGHT_KEY = "hadoop.hpc.transport.max.inflight";
  public static final int MAX_INFLIGHT_DEFAULT = 64;

  /** Event threads per transport. */
  public static final String IO_THREADS_KEY = "hadoop.hpc.transport.io.threads";
  public static final int IO_THREADS_DEFAULT = 1;

  /**
   * tcp: a directory where listeners also bind a Unix domain socket, so that peers on the same
   * host (and network namespace) of the same user reach them without the TCP stack; it must
   * belong to that user and be writable by it alone (made with mode 700 when missing). Empty
   * turns this off. The default depends on nothing but the user, so that every process of that
   * user on a host finds the same directory: a YARN container's task resolves neither the
   * daemons' {@code -Dhadoop.home.dir} nor their environment, so a default under
   * {@code hadoop.tmp.dir} left tasks (HDFS clients, shuffle fetchers) on TCP.
   */
  public static final String TCP_LOCAL_DIR_KEY = "hadoop.hpc.transport.tcp.local.dir";
  public static final String TCP_LOCAL_DIR_DEFAULT = "/tmp/hadoop-hpc-${user.name}/sockets";

  /**
   * Registers the deprecated names of these keys with Hadoop's {@link Configuration}, so that a
   * value set under an old name is read under the new one (with Hadoop's one-time deprecation
   * warning naming it). The readers call this from their static initializers: the key
   * constants are inlined where they are used, so this class's own initializer may never run.
   * Idempotent (Hadoop keeps the first registration of a name).
   */
  public static void addDeprecations() {
    Configuration.addDeprecations(new DeprecationDelta[] {
        new DeprecationDelta(OPEN_FAILS_WITHOUT_VERBS_DEPRECATED_KEY,
            OPEN_FAILS_WITHOUT_VERBS_KEY)});
  }
}
