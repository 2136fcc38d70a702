/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

/**
 * Configuration keys of the hadoop-hpc shuffle (the NodeManager's
 * {@code org.hadoophpc.yarn.shuffle.HpcShuffleHandler} and the reducer plugin
 * {@link HpcShuffleConsumer}). Every key is also in {@code hpc-shuffle-default.xml}
 * ({@code ShuffleConfigKeysTest} keeps the two in step). Read once into {@link ShuffleConf}.
 *
 * <p>The transport underneath (verbs or tcp, device, timeouts, registered memory) is configured
 * with the {@code hadoop.hpc.transport.*} keys and HiBD's {@code hadoop.ib.enabled},
 * {@code hadoop.roce.enabled}, {@code hadoop.rdma.dev.name}.
 */
public final class ShuffleConfigKeys {
  private ShuffleConfigKeys() {
  }

  /**
   * First port of the shuffle service. A fixed port, like stock's {@code mapreduce.shuffle.port}:
   * the MapReduce AM only advertises the stock service's port, so reducers find ours by number.
   */
  public static final String PORT_KEY = "mapreduce.hpc.shuffle.port";
  public static final int PORT_DEFAULT = 13563;

  /**
   * How many ports from {@link #PORT_KEY} on: a service binds the first free one and reducers try
   * them in turn (asking each for the map outputs it needs). 1 for one NodeManager per host; more
   * when several NodeManagers share a host (mini clusters, tests).
   */
  public static final String PORT_RANGE_KEY = "mapreduce.hpc.shuffle.port.range";
  public static final int PORT_RANGE_DEFAULT = 1;

  /** Address the service binds; empty: all interfaces (0.0.0.0). */
  public static final String BIND_HOST_KEY = "mapreduce.hpc.shuffle.bind-host";
  public static final String BIND_HOST_DEFAULT = "";

  /** Service threads reading map-output files (the transport's event threads never block). */
  public static final String SERVER_THREADS_KEY = "mapreduce.hpc.shuffle.server.threads";
  public static final int SERVER_THREADS_DEFAULT = 4;

  /**
   * Event threads of the service's transport (tcp; verbs runs one loop per transport), in place
   * of {@code hadoop.hpc.transport.io.threads} for the NodeManager only; 0 keeps that key. The
   * service sends every reducer's chunks (sendfile) from these threads: 8 reducers on 2 cores
   * fetched 2.40-2.80 GB/s with one and 2.70-3.14 GB/s with four (dev-support/bench/shuffle,
   * three alternated runs each).
   */
  public static final String SERVER_IO_THREADS_KEY = "mapreduce.hpc.shuffle.server.io.threads";
  public static final int SERVER_IO_THREADS_DEFAULT = 4;

  /** Requests waiting for a reader thread before new ones are refused with BUSY (back-pressure). */
  public static final String SERVER_QUEUE_KEY = "mapreduce.hpc.shuffle.server.queue";
  public static final int SERVER_QUEUE_DEFAULT = 4096;

  /**
   * Registered memory the service may hold in pre-fetched map-output chunks: when a reducer opens
   * a fetch, the first chunk of every partition it asked for is read ahead into transport
   * buffers so the reducer's first read of each map is served from memory.
   */
  public static final String PREFETCH_MAX_KEY = "mapreduce.hpc.shuffle.prefetch.max";
  public static final String PREFETCH_MAX_DEFAULT = "64m";

  /** Bytes per read request; at most the transport's max.message.size. */
  public static final String CHUNK_SIZE_KEY = "mapreduce.hpc.shuffle.chunk.size";
  public static final String CHUNK_SIZE_DEFAULT = "1m";

  /** Read requests a reducer keeps in flight per map output (pipelining). */
  public static final String FETCH_INFLIGHT_KEY = "mapreduce.hpc.shuffle.fetch.inflight";
  public static final int FETCH_INFLIGHT_DEFAULT = 4;

  /**
   * true: a reducer that cannot use the hpc shuffle (service unreachable, job token not given to
   * it, transport unusable) fails with the reason; false: it falls back to the stock HTTP
   * shuffle for the rest of its run, logs why and counts it in HPC_SHUFFLE.FALLBACKS.
   */
  public static final String STRICT_KEY = "mapreduce.hpc.shuffle.strict";
  public static final boolean STRICT_DEFAULT = false;

  /**
   * NodeManager: answer reads straight from the map-output file where the transport can (tcp:
   * sendfile from the page cache, on the event thread) instead of reading each chunk into
   * memory on a reader thread first.
   */
  public static final String SENDFILE_KEY = "mapreduce.hpc.shuffle.sendfile";
  public static final boolean SENDFILE_DEFAULT = true;

  /**
   * Reducer: milliseconds between two asks to the MapReduce AM for new map-completion events, at
   * the least. Stock polls every 1000 ms, so a reducer learns of the last map half a second late
   * on average: most of the shuffle's tail when the fetch itself is fast.
   */
  public static final String EVENTS_INTERVAL_KEY = "mapreduce.hpc.shuffle.events.interval.ms";
  public static final int EVENTS_INTERVAL_DEFAULT = 100;

  /**
   * Reducer: the job's budget of event polls per second on its AM, shared by all its reducers. A
   * reducer polls every max({@link #EVENTS_INTERVAL_KEY}, reducers x 1000 / budget) ms, never
   * slower than stock's 1000 ms: jobs with many reducers poll as stock does.
   */
  public static final String EVENTS_AM_BUDGET_KEY = "mapreduce.hpc.shuffle.events.am.polls";
  public static final int EVENTS_AM_BUDGET_DEFAULT = 200;

  /**
   * MapReduce over Lustre: {@code off}; {@code local-disks} (job input and output on the Lustre
   * mount, intermediate data on node-local disks, shuffled over the network as configured);
   * {@code no-local-disks} (intermediate data on Lustre: each map publishes its one output file and
   * index under {@link #LUSTRE_SHUFFLE_DIR_KEY}, reducers read them straight from there, no network
   * shuffle). Unset (the default): HiBD's {@link #HIBD_LUSTRE_MODE} (1 or 2) if set, else off.
   */
  public static final String LUSTRE_MODE_KEY = "mapreduce.hpc.lustre.mode";
  public static final String LUSTRE_MODE_DEFAULT = "";

  /** HiBD's spelling of {@link #LUSTRE_MODE_KEY}: 1 = with local disks, 2 = without. */
  public static final String HIBD_LUSTRE_MODE = "mapred.rdma.shuffle.lustre";

  /**
   * Directory on the shared (Lustre) mount where maps publish their output in the
   * {@code no-local-disks} mode, as {@code <dir>/<job id>/<map attempt id>/file.out[.index]};
   * the NodeManagers' shuffle service deletes {@code <dir>/<job id>} when the job ends. The same
   * path on every node.
   */
  public static final String LUSTRE_SHUFFLE_DIR_KEY = "mapreduce.hpc.lustre.shuffle.dir";
  public static final String LUSTRE_SHUFFLE_DIR_DEFAULT = "";
}
