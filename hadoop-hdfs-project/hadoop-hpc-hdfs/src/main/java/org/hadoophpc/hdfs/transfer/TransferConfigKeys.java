/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configuration.DeprecationDelta;

/**
 * Configuration keys of HDFS DataTransfer over the hpc transport (the DataNode's
 * {@link RdmaDataTransferPlugin}, clients' and mirrors' {@link RdmaSocketFactory}). Every key is
 * also in {@code hpc-hdfs-default.xml} in this jar, the reference for users
 * ({@code TransferConfigKeysTest} keeps the two in step); it is not a default resource. Read once
 * into {@link TransferConf}, which registers the deprecated names ({@link #addDeprecations()})
 * before it reads. The transport underneath is configured with the {@code hadoop.hpc.transport.*}
 * keys ({@link org.hadoophpc.net.TransportConfigKeys}).
 */
public final class TransferConfigKeys {
  private TransferConfigKeys() {
  }

  /** What every key of this class starts with. */
  public static final String PREFIX = "dfs.hpc.datatransfer.";

  /**
   * Whether HDFS block transfers use the transport (the plugin and factory still must be set):
   * {@code auto} = where the transport is RDMA or the tcp transport was asked for (the rule:
   * {@link TransferUse}), {@code true} = always, {@code false} = never (stock TCP, the other keys
   * left in place).
   */
  public static final String ENABLED_KEY = "dfs.hpc.datatransfer.enabled";
  public static final String ENABLED_DEFAULT = "auto";

  /**
   * Clients: true makes a block stream that cannot use the transport (the DataNode unreachable
   * over it, not serving it, refusing the stream) fail, naming this key, so HDFS treats that
   * DataNode as failed; false (the default) uses stock TCP for it.
   */
  public static final String STREAM_FAILS_WITHOUT_TRANSPORT_KEY =
      "dfs.hpc.datatransfer.stream.fails.without.transport";
  public static final boolean STREAM_FAILS_WITHOUT_TRANSPORT_DEFAULT = false;
  /** The earlier name of {@link #STREAM_FAILS_WITHOUT_TRANSPORT_KEY}, still read. */
  public static final String STREAM_FAILS_WITHOUT_TRANSPORT_DEPRECATED_KEY =
      "dfs.hpc.datatransfer.strict";

  /**
   * The transport endpoint of a DataNode is its TCP transfer port plus this. 0 (same number)
   * needs a transport with its own port space (verbs: rdma_cm); the tcp transport needs another
   * port, the same offset on every node.
   */
  public static final String PORT_OFFSET_KEY = "dfs.hpc.datatransfer.port.offset";
  public static final int PORT_OFFSET_DEFAULT = 0;

  /** The most a client waits for the transport connection and HELLO before using TCP. */
  public static final String CONNECT_TIMEOUT_KEY = "dfs.hpc.datatransfer.connect.timeout";
  public static final String CONNECT_TIMEOUT_DEFAULT = "3s";

  /**
   * DataNodes: the most a connection to the transport endpoint may go without a valid HELLO
   * before it is closed. Until its HELLO a connection is untrusted: one request of at most
   * {@code TransferHandler.HELLO_MAX_BYTES}, holding no pooled memory while it arrives. Longer
   * than clients' {@link #CONNECT_TIMEOUT_KEY}, which bounds how long they wait for the answer.
   */
  public static final String HELLO_TIMEOUT_KEY = "dfs.hpc.datatransfer.hello.timeout";
  public static final String HELLO_TIMEOUT_DEFAULT = "10s";

  /**
   * DataNodes: the most transport connections kept open from one remote IP address (tcp; peers
   * on the same host by the local socket are not counted); one more is closed when accepted, and
   * that client uses TCP for this DataNode. 0: no limit. Bounds what one host can hold of the
   * endpoint's connections without a HELLO; generous, as one host's tasks open a few streams
   * each.
   */
  public static final String MAX_CONNECTIONS_PER_ADDRESS_KEY =
      "dfs.hpc.datatransfer.max.connections.per.address";
  public static final int MAX_CONNECTIONS_PER_ADDRESS_DEFAULT = 1024;

  /** How long a DataNode that could not be reached over the transport is reached over TCP. */
  public static final String NEGATIVE_CACHE_KEY = "dfs.hpc.datatransfer.negative.cache";
  public static final String NEGATIVE_CACHE_DEFAULT = "60s";

  /** The most stream bytes in one message (a 64 KiB packet with its header and checksums fits). */
  public static final String CHUNK_SIZE_KEY = "dfs.hpc.datatransfer.chunk.size";
  public static final String CHUNK_SIZE_DEFAULT = "128k";

  /**
   * Upstream messages a DataNode lets a client have unconsumed (per stream); 0: by the transport
   * (32 on tcp, 4 on verbs; {@code TransferConf.window}).
   */
  public static final String WINDOW_KEY = "dfs.hpc.datatransfer.window";
  public static final int WINDOW_DEFAULT = 0;

  /**
   * Downstream places (PULLs) a client keeps parked at the DataNode (per stream); 0: by the
   * transport (16 on tcp, 8 on verbs; {@code TransferConf.pulls}). Parked PULLs plus the window
   * must stay below {@code hadoop.hpc.transport.max.inflight}.
   */
  public static final String PULLS_KEY = "dfs.hpc.datatransfer.pulls";
  public static final int PULLS_DEFAULT = 0;

  /** Accepted streams waiting for an xceiver thread before new ones are refused (BUSY). */
  public static final String ACCEPT_QUEUE_KEY = "dfs.hpc.datatransfer.accept.queue";
  public static final int ACCEPT_QUEUE_DEFAULT = 128;

  /**
   * The thread waiting on a transfer stream (a client's reader or writer, a DataNode's xceiver,
   * a mirror's responder) reads the stream's connection itself where the transport can (tcp),
   * instead of the transport's thread reading and handing each message over: one wake-up per
   * message instead of two. Read by clients, mirrors and DataNodes alike.
   */
  public static final String CALLER_READS_KEY = "dfs.hpc.datatransfer.caller.reads";
  public static final boolean CALLER_READS_DEFAULT = true;

  /**
   * Registers the deprecated names of these keys with Hadoop's {@link Configuration}, so that a
   * value set under an old name is read under the new one (with Hadoop's one-time deprecation
   * warning naming it). The readers call this from their static initializers: the key
   * constants are inlined where they are used, so this class's own initializer may never run.
   * Idempotent (Hadoop keeps the first registration of a name).
   */
  public static void addDeprecations() {
    Configuration.addDeprecations(new DeprecationDelta[] {
        new DeprecationDelta(STREAM_FAILS_WITHOUT_TRANSPORT_DEPRECATED_KEY,
            STREAM_FAILS_WITHOUT_TRANSPORT_KEY)});
  }
}
