/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configuration.DeprecationDelta;

/**
 * Configuration keys of the hadoop-hpc shuffle (the NodeManager's
 * {@code org.hadoophpc.yarn.shuffle.HpcShuffleHandler} and the reducer plugin
 * {@code HpcShuffleConsumer}). Every key is also in {@code hpc-shuffle-default.xml} in this jar,
 * the reference for users ({@code ShuffleConfigKeysTest} keeps the two in step); it is not a
 * default resource. Read once into {@link ShuffleConf}, which registers the deprecated names
 * ({@link #addDeprecations()}) before it reads.
 *
 * <p>The transport underneath (verbs or tcp, device, timeouts, registered memory) is configured
 * with the {@code hadoop.hpc.transport.*} keys and HiBD's {@code hadoop.ib.enabled},
 * {@code hadoop.roce.enabled}, {@code hadoop.rdma.dev.name}.
 */
public final class ShuffleConfigKeys {
  private ShuffleConfigKeys() {
  }

  /**
   * First port of the shuffle service. 0 (the default): the port after the NodeManager's own
   * stock shuffle port ({@code mapreduce.shuffle.port}, 13562, so 13563), which the MapReduce AM
   * advertises to reducers: every NodeManager's service then has its own port even when several
   * share a host. A fixed number works as well (all NodeManagers must agree with the jobs).
   */
  public static final String PORT_KEY = "mapreduce.hpc.shuffle.port";
  public static final int PORT_DEFAULT = 0;

  /**
   * How many ports from the first on: a service binds the first free one and reducers try them
   * in order. Every answer names the stock shuffle port of the NodeManager it belongs to, and a
   * reducer only trusts the service beside the map outputs it fetches, which proves with the job
   * token that it listens on the port the reducer connected to; a port held by another
   * NodeManager (or anything else) is skipped, never used.
   */
  public static final String PORT_RANGE_KEY = "mapreduce.hpc.shuffle.port.range";
  public static final int PORT_RANGE_DEFAULT = 8;

  /**
   * Address the service binds; empty (the default): the NodeManager's own, that is
   * {@code yarn.nodemanager.bind-host} when set, else the host of {@code yarn.nodemanager.address}
   * unless it is a wildcard, else all interfaces.
   */
  public static final String BIND_HOST_KEY = "mapreduce.hpc.shuffle.bind-host";
  public static final String BIND_HOST_DEFAULT = "";

  /**
   * With {@code mapreduce.shuffle.ssl.enabled=true} the hpc shuffle never moves map outputs in
   * plaintext over tcp: the NodeManager does not open its hpc listener on tcp and reducers use
   * stock's (TLS) shuffle. Over verbs it serves plaintext only when this is true (the admin
   * declares the RDMA fabric trusted).
   */
  public static final String SSL_VERBS_PLAINTEXT_KEY = "mapreduce.hpc.shuffle.ssl.verbs.plaintext";
  public static final boolean SSL_VERBS_PLAINTEXT_DEFAULT = false;

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

  /*
   * Service bounds. Sized for 64 nodes x 16 reducers: 1024 reducers x 5 fetchers
   * (mapreduce.reduce.shuffle.parallelcopies) hold at most 5120 sessions, one per fetcher, and
   * a session names at most 20 maps (stock's ShuffleSchedulerImpl.MAX_MAPS_AT_ONCE). A session or
   * file cap that is reached answers BUSY (the reducer waits, bounded by busy.max.retries).
   */

  /** Fetch sessions the service holds open at once, all jobs together. */
  public static final String SERVER_SESSIONS_MAX_KEY = "mapreduce.hpc.shuffle.server.sessions.max";
  public static final int SERVER_SESSIONS_MAX_DEFAULT = 8192;

  /** Fetch sessions one job's reducers hold open at once (other jobs keep the rest). */
  public static final String SERVER_SESSIONS_PER_JOB_MAX_KEY =
      "mapreduce.hpc.shuffle.server.sessions.per.job.max";
  public static final int SERVER_SESSIONS_PER_JOB_MAX_DEFAULT = 6144;

  /**
   * Map-output files the service holds open at once, all jobs together. Sessions reading the
   * same map attempt share its file, so this counts distinct map outputs being served.
   */
  public static final String SERVER_FILES_MAX_KEY = "mapreduce.hpc.shuffle.server.files.max";
  public static final int SERVER_FILES_MAX_DEFAULT = 16384;

  /** Map-output files one job's sessions hold open at once. */
  public static final String SERVER_FILES_PER_JOB_MAX_KEY =
      "mapreduce.hpc.shuffle.server.files.per.job.max";
  public static final int SERVER_FILES_PER_JOB_MAX_DEFAULT = 8192;

  /**
   * Maps one open may name (each once); an open naming more, or one twice, is refused as a bad
   * request. Stock's scheduler hands a fetcher at most 20 per host.
   */
  public static final String SERVER_OPEN_MAPS_MAX_KEY = "mapreduce.hpc.shuffle.server.open.maps.max";
  public static final int SERVER_OPEN_MAPS_MAX_DEFAULT = 64;

  /**
   * Connections that have not yet proved a job token (their first open), all peers together.
   * One more closes the oldest of them (a flood cannot keep a reducer out: its connection
   * proves itself one round trip after it connects); each is closed anyway after
   * {@code hadoop.hpc.transport.io.timeout}.
   */
  public static final String SERVER_UNTRUSTED_MAX_KEY = "mapreduce.hpc.shuffle.server.untrusted.max";
  public static final int SERVER_UNTRUSTED_MAX_DEFAULT = 1024;

  /**
   * Connections from one address that have not yet proved a job token; one more closes that
   * address's oldest, so one host cannot push out the others' (16 reducers x 5 fetchers = 80).
   */
  public static final String SERVER_UNTRUSTED_PER_ADDRESS_MAX_KEY =
      "mapreduce.hpc.shuffle.server.untrusted.per.address.max";
  public static final int SERVER_UNTRUSTED_PER_ADDRESS_MAX_DEFAULT = 128;

  /**
   * Reducer: BUSY answers in a row from one host's service (its read queue or its sessions are
   * full) that a reducer waits out, 500 ms apart, before it counts a failed fetch of each map it
   * wanted there, as stock's fetcher does for a host that does not serve (the scheduler
   * penalises the host, tells the AM, and maps are re-run or the reducer fails with the
   * reason). Never an unbounded wait: a service that is always busy is a failing one. The
   * default, 20, waits about 10 s.
   */
  public static final String BUSY_MAX_RETRIES_KEY = "mapreduce.hpc.shuffle.busy.max.retries";
  public static final int BUSY_MAX_RETRIES_DEFAULT = 20;

  /**
   * Registered memory the service may hold in pre-fetched map-output chunks: when a reducer opens
   * a fetch, the first chunk of every partition it asked for is read ahead into transport
   * buffers so the reducer's first read of each map is served from memory.
   */
  public static final String PREFETCH_MAX_KEY = "mapreduce.hpc.shuffle.prefetch.max";
  public static final String PREFETCH_MAX_DEFAULT = "64m";

  /**
   * Bytes per read request; at most the transport's max.message.size. Empty (the default): by
   * the transport of the connection, {@link #CHUNK_SIZE_TCP} or {@link #CHUNK_SIZE_VERBS}.
   */
  public static final String CHUNK_SIZE_KEY = "mapreduce.hpc.shuffle.chunk.size";
  public static final String CHUNK_SIZE_DEFAULT = "";
  /**
   * Over tcp: a chunk the reducer copies out while it is still in the core's cache (1 MiB L2
   * per core here): 512 KiB with one read in flight fetched 1.25x stock, 1 MiB with four 0.98x
   * ({@code dev-support/bench/shuffle --rounds 7 --size 2g}, docs/architecture.md).
   */
  public static final int CHUNK_SIZE_TCP = 512 << 10;
  /** Over verbs: each chunk is one rendezvous (bind, RDMA READ, invalidate); fewer, larger. */
  public static final int CHUNK_SIZE_VERBS = 1 << 20;

  /**
   * Read requests a reducer keeps in flight per map output (pipelining). Empty (the default):
   * by the transport of the connection, {@link #FETCH_INFLIGHT_TCP} or
   * {@link #FETCH_INFLIGHT_VERBS}.
   */
  public static final String FETCH_INFLIGHT_KEY = "mapreduce.hpc.shuffle.fetch.inflight";
  public static final String FETCH_INFLIGHT_DEFAULT = "";
  /** Over tcp one: the socket's own buffers already overlap the service's sends with reading. */
  public static final int FETCH_INFLIGHT_TCP = 1;
  /** Over verbs four: a rendezvous round trip per chunk would otherwise idle the link. */
  public static final int FETCH_INFLIGHT_VERBS = 4;

  /**
   * true: a reducer that cannot use the hpc shuffle (service unreachable, job token not given to
   * it, transport unusable) fails with the reason; false: it falls back to the stock HTTP
   * shuffle for the rest of its run, logs why and counts it in HPC_SHUFFLE.FALLBACKS.
   */
  public static final String REDUCER_FAILS_WITHOUT_HPC_KEY =
      "mapreduce.hpc.shuffle.reducer.fails.without.hpc";
  public static final boolean REDUCER_FAILS_WITHOUT_HPC_DEFAULT = false;
  /** The earlier name of {@link #REDUCER_FAILS_WITHOUT_HPC_KEY}, still read. */
  public static final String REDUCER_FAILS_WITHOUT_HPC_DEPRECATED_KEY =
      "mapreduce.hpc.shuffle.strict";

  /**
   * NodeManager: answer reads straight from the map-output file where the transport can (tcp:
   * sendfile from the page cache, on the event thread) instead of reading each chunk into
   * memory on a reader thread first.
   */
  public static final String SENDFILE_KEY = "mapreduce.hpc.shuffle.sendfile";
  public static final boolean SENDFILE_DEFAULT = true;

  /**
   * Reducer, where the transport allows it (tcp): a fetcher waiting for a read's answer reads
   * its connection itself instead of waiting for the transport's event thread to read it and
   * wake it, so an answer costs one wake-up and is copied out while it is in the core's cache.
   */
  public static final String CALLER_READS_KEY = "mapreduce.hpc.shuffle.caller.reads";
  public static final boolean CALLER_READS_DEFAULT = true;

  /**
   * Both sides, over verbs: the NodeManager's service also listens over tcp (unless stock's
   * shuffle is on TLS: never plaintext over tcp), and a reducer that cannot reach a host's
   * service over verbs fetches from it over tcp before giving up on the hpc path for that host.
   * Off, or with {@code hadoop.hpc.transport.open.fails.without.verbs=true}, a host unreachable
   * over verbs is handled as before: the reducer falls back to stock's HTTP shuffle (or fails,
   * under {@link #REDUCER_FAILS_WITHOUT_HPC_KEY}).
   */
  public static final String TCP_FALLBACK_KEY = "mapreduce.hpc.shuffle.tcp.fallback";
  public static final boolean TCP_FALLBACK_DEFAULT = true;

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
   * shuffle). Empty (the default): HiBD's {@link #HIBD_LUSTRE_MODE_KEY} (1 or 2) if set, else
   * off.
   */
  public static final String LUSTRE_MODE_KEY = "mapreduce.hpc.lustre.mode";
  public static final String LUSTRE_MODE_DEFAULT = "";

  /**
   * HiBD's spelling of {@link #LUSTRE_MODE_KEY}: 1 = with local disks, 2 = without (0 = off);
   * read when ours is empty. No default of its own.
   */
  public static final String HIBD_LUSTRE_MODE_KEY = "mapred.rdma.shuffle.lustre";

  /**
   * Directory on the shared (Lustre) mount where maps publish their output in the
   * {@code no-local-disks} mode, as {@code <dir>/<job id>/<map attempt id>/file.out[.index]};
   * the NodeManagers' shuffle service deletes {@code <dir>/<job id>} when the job ends. The same
   * path on every node.
   */
  public static final String LUSTRE_SHUFFLE_DIR_KEY = "mapreduce.hpc.lustre.shuffle.dir";
  public static final String LUSTRE_SHUFFLE_DIR_DEFAULT = "";

  /**
   * Registers the deprecated names of these keys with Hadoop's {@link Configuration}, so that a
   * value set under an old name is read under the new one (with Hadoop's one-time deprecation
   * warning naming it). The readers call this from their static initializers: the key
   * constants are inlined where they are used, so this class's own initializer may never run.
   * Idempotent (Hadoop keeps the first registration of a name).
   */
  public static void addDeprecations() {
    Configuration.addDeprecations(new DeprecationDelta[] {
        new DeprecationDelta(REDUCER_FAILS_WITHOUT_HPC_DEPRECATED_KEY,
            REDUCER_FAILS_WITHOUT_HPC_KEY)});
  }
}
