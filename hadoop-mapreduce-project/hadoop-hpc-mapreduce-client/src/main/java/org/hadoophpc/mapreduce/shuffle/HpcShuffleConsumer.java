/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.RawKeyValueIterator;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapred.ShuffleConsumerPlugin;
import org.apache.hadoop.mapred.Task;
import org.apache.hadoop.mapred.TaskStatus;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.reduce.ExceptionReporter;
import org.apache.hadoop.mapreduce.task.reduce.Fetcher;
import org.apache.hadoop.mapreduce.task.reduce.HpcEventFetcherBridge;
import org.apache.hadoop.mapreduce.task.reduce.MergeManager;
import org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl;
import org.apache.hadoop.mapreduce.task.reduce.Shuffle;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleSchedulerImpl;
import org.hadoophpc.mapreduce.lustre.LustreMapOutputCollector;
import org.hadoophpc.mapreduce.lustre.LustreMode;
import org.hadoophpc.mapreduce.lustre.SharedMapOutputs;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reducer's hpc shuffle: fetches map outputs from the NodeManagers'
 * {@code org.hadoophpc.yarn.shuffle.HpcShuffleHandler} over the transport (verbs where an RDMA
 * device is usable, tcp otherwise) and feeds them to Hadoop's own {@link MergeManagerImpl}, so
 * every key type, comparator, combiner and codec behaves as with stock. Which maps exist, failed,
 * or were re-run comes from Hadoop's {@link ShuffleSchedulerImpl} and map-completion event
 * fetcher, and fetch failures are reported through it, so the AM re-runs lost maps exactly as
 * with stock.
 *
 * <p>Enable per job or in mapred-site.xml:
 * {@code mapreduce.job.reduce.shuffle.consumer.plugin.class=}this class (the NodeManagers
 * run HpcShuffleHandler as their {@code mapreduce_shuffle}).
 *
 * <p>Fallback: when a host's stock shuffle answers but no hpc service does, or the service holds no
 * token for the job, or the transport cannot open, the task switches to stock's HTTP
 * {@link Fetcher}s on the same scheduler and merger (keeping what it already fetched), logs the
 * reason once and counts {@link HpcShuffleCounter#FALLBACKS}; with
 * {@code mapreduce.hpc.shuffle.reducer.fails.without.hpc=true} it fails with that reason instead.
 * Local (uber) runs and encrypted intermediate data use stock's shuffle from the start.
 *
 * <p>MapReduce over Lustre without local disks ({@code mapreduce.hpc.lustre.mode=no-local-disks}):
 * no network at all; {@link SharedFsFetcher}s read each map's published output straight from
 * {@code mapreduce.hpc.lustre.shuffle.dir}, with the same scheduler, merger and failure reports.
 */
public class HpcShuffleConsumer<K, V> implements ShuffleConsumerPlugin<K, V>, ExceptionReporter {
  private static final Logger LOG = LoggerFactory.getLogger(HpcShuffleConsumer.class);
  private static final int PROGRESS_MS = 2000;
  private static final int MAX_EVENTS_PER_CALL = 10000;
  private static final int MAX_EVENTS_IN_FLIGHT = 3_000_000;

  private Context<K, V> context;
  private Shuffle<K, V> stock;
  private JobConf jobConf;
  private TaskAttemptID reduceId;
  private Reporter reporter;
  private ShuffleSchedulerImpl<K, V> scheduler;
  private MergeManager<K, V> merger;
  private ShuffleClientMetrics metrics;
  private ShuffleConf shuffleConf;
  private TransportConf transportConf;
  private Transport transport;
  private ShuffleFetchClient client;
  private LustreMode lustreMode;
  private SharedMapOutputs shared;
  private final List<MapOutputFetcher<K, V>> fetchers = new ArrayList<>();
  private final List<Fetcher<K, V>> stockFetchers = new ArrayList<>();
  private Throwable failure;
  private String failureThread;
  private volatile String fallbackReason;

  @Override
  public void init(Context<K, V> ctx) {
    this.context = ctx;
    this.jobConf = ctx.getJobConf();
    this.reduceId = ctx.getReduceId();
    this.reporter = ctx.getReporter();
    boolean local = ctx.getLocalMapFiles() != null;
    String stockWhy = stockReason(jobConf, local);
    boolean encryption = stockWhy != null && !local;
    if (stockWhy != null) {
      LOG.info("hpc shuffle: using the stock shuffle because {}", stockWhy);
      if (encryption) {
        reporter.incrCounter(HpcShuffleCounter.STOCK_FOR_ENCRYPTION, 1);
      }
      stock = new Shuffle<>();
      stock.init(ctx);
      return;
    }
    // bad values fail the task here with the key named, before anything is fetched
    shuffleConf = ShuffleConf.from(jobConf);
    lustreMode = LustreMode.from(jobConf);
    transportConf = TransportConf.from(jobConf);
    metrics = ShuffleClientMetrics.create(reduceId, jobConf);
    scheduler = new ShuffleSchedulerImpl<>(jobConf, ctx.getStatus(), reduceId, this,
        ctx.getCopyPhase(), ctx.getShuffledMapsCounter(), ctx.getReduceShuffleBytes(),
        ctx.getFailedShuffleCounter());
    merger = new MergeManagerImpl<>(reduceId, jobConf, ctx.getLocalFS(),
        ctx.getLocalDirAllocator(), reporter, ctx.getCodec(), ctx.getCombinerClass(),
        ctx.getCombineCollector(), ctx.getSpilledRecordsCounter(),
        ctx.getReduceCombineInputCounter(), ctx.getMergedMapOutputsCounter(), this,
        ctx.getMergePhase(), ctx.getMapOutputFile());
  }

  @Override
  public RawKeyValueIterator run() throws IOException, InterruptedException {
    if (stock != null) {
      return stock.run();
    }
    int perReducer = Math.max(100, MAX_EVENTS_IN_FLIGHT / Math.max(1,
        jobConf.getNumReduceTasks()));
    HpcEventFetcherBridge events = HpcEventFetcherBridge.start(reduceId, context.getUmbilical(),
        scheduler, this, Math.min(MAX_EVENTS_PER_CALL, perReducer),
        shuffleConf.eventsIntervalMs(jobConf.getNumReduceTasks()));
    int parallel = jobConf.getInt(MRJobConfig.SHUFFLE_PARALLEL_COPIES, 5);
    try {
      if (lustreMode == LustreMode.NO_LOCAL_DISKS) {
        shared = sharedMapOutputs(jobConf);
        LOG.info("hpc shuffle: {} fetchers reading map outputs straight from {} ({}={})",
            parallel, shared, ShuffleConfigKeys.LUSTRE_MODE_KEY,
            LustreMode.NO_LOCAL_DISKS.value());
        for (int i = 0; i < parallel; i++) {
          fetchers.add(new SharedFsFetcher<>(this, i, jobConf, reduceId, scheduler, merger,
              metrics, reporter, shared));
        }
        fetchers.forEach(Thread::start);
      } else {
        openTransport();
      }
      if (shared == null && fallbackReason == null) {
        LOG.info("hpc shuffle: {} fetchers over {} ({})", parallel, transport.name(),
            shuffleConf);
        for (int i = 0; i < parallel; i++) {
          HpcFetcher<K, V> f = new HpcFetcher<>(this, i, jobConf, reduceId, scheduler, merger,
              metrics, reporter, client);
          fetchers.add(f);
          f.start();
        }
      }
      while (!scheduler.waitUntilDone(PROGRESS_MS)) {
        reporter.progress();
        checkFailure();
        if (fallbackReason != null && stockFetchers.isEmpty()) {
          switchToStock(parallel);
        }
      }
    } finally {
      events.close();
      stopFetchers();
      scheduler.close();
    }
    context.getCopyPhase().complete();
    TaskStatus status = context.getStatus();
    status.setPhase(TaskStatus.Phase.SORT);
    Task task = context.getReduceTask();
    task.statusUpdate(context.getUmbilical());
    RawKeyValueIterator kv;
    try {
      kv = merger.close();
    } catch (Throwable t) {
      throw new IOException("error in the final merge of " + reduceId, t);
    }
    checkFailure();
    return kv;
  }

  /**
   * The shared directory of the no-local-disks mode, checked against the map side's setting:
   * a misconfigured job fails here naming the key, rather than waiting for outputs that are not
   * published.
   */
  private static SharedMapOutputs sharedMapOutputs(JobConf job) throws IOException {
    boolean publishing = false;
    try {
      for (Class<?> c : job.getClasses(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR)) {
        publishing |= LustreMapOutputCollector.class.isAssignableFrom(c);
      }
    } catch (RuntimeException e) {
      // an unknown class: reported below with the key
    }
    if (!publishing) {
      throw new IOException(ShuffleConfigKeys.LUSTRE_MODE_KEY + "="
          + LustreMode.NO_LOCAL_DISKS.value() + " needs "
          + MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR + "="
          + LustreMapOutputCollector.class.getName() + " (is '"
          + job.get(MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR, "") + "'): the maps must"
          + " publish their output on the shared mount");
    }
    SharedMapOutputs shared;
    try {
      shared = SharedMapOutputs.from(job);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    shared.checkUsable();
    return shared;
  }

  /**
   * Why a reducer of {@code job} uses stock's shuffle from the start (whatever
   * {@code mapreduce.hpc.shuffle.reducer.fails.without.hpc} says: these are not failures), or
   * null: its map outputs are local (uber and local jobs), or its intermediate data is encrypted
   * or its shuffle TLS, which only stock serves (TLS: unless plaintext over verbs is allowed and
   * verbs is here).
   */
  static String stockReason(JobConf job, boolean localMapOutputs) {
    if (localMapOutputs) {
      return "the map outputs are local (uber or local job)";
    }
    if (job.getBoolean(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA,
        MRJobConfig.DEFAULT_MR_ENCRYPTED_INTERMEDIATE_DATA)) {
      return MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA + "=true is served by stock only";
    }
    if (job.getBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY,
        MRConfig.SHUFFLE_SSL_ENABLED_DEFAULT)) {
      return sslStockReason(job);
    }
    return null;
  }

  /**
   * Why a job on TLS shuffle ({@code mapreduce.shuffle.ssl.enabled=true}) uses stock's shuffle,
   * or null when it may use ours: only over verbs, and only when the admin declared the fabric
   * trusted with {@link ShuffleConfigKeys#SSL_VERBS_PLAINTEXT_KEY} (NodeManagers on TLS do not
   * serve the hpc shuffle over tcp at all).
   */
  private static String sslStockReason(JobConf job) {
    String ssl = MRConfig.SHUFFLE_SSL_ENABLED_KEY + "=true";
    if (!job.getBoolean(ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY,
        ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_DEFAULT)) {
      return ssl + " and the hpc shuffle does not encrypt (set "
          + ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY + "=true to allow plaintext over verbs)";
    }
    try (Transport t = TransportFactory.create(job)) {
      if (!"verbs".equals(t.name())) {
        return ssl + " and the transport here is " + t.name() + ", not verbs";
      }
      return null;
    } catch (IOException | RuntimeException e) {
      return ssl + " and the transport could not open (" + e.getMessage() + ")";
    }
  }

  private void openTransport() throws IOException {
    try {
      transport = TransportFactory.create(jobConf);
    } catch (IOException | RuntimeException e) {
      requestFallback("the transport could not open: " + e.getMessage());
      return;
    }
    client = new ShuffleFetchClient(transport, transportConf, shuffleConf,
        context.getReduceTask().getShuffleSecret());
    String noTcp = tcpFallbackRefusal();
    if (noTcp == null) {
      client.withTcpFallback(this::openTcp, host -> {
        LOG.warn("hpc shuffle: {} cannot be reached over {}; fetching from it over tcp ({})",
            host, transport.name(), ShuffleConfigKeys.TCP_FALLBACK_KEY);
        reporter.incrCounter(HpcShuffleCounter.HOSTS_OVER_TCP, 1);
      });
    } else if (!"tcp".equals(transport.name())) {
      LOG.info("hpc shuffle: hosts unreachable over {} are not tried over tcp: {}",
          transport.name(), noTcp);
    }
  }

  /** Why hosts unreachable over verbs must not be tried over tcp, or null when they may. */
  private String tcpFallbackRefusal() {
    if ("tcp".equals(transport.name())) {
      return "the transport is tcp";
    }
    if (!shuffleConf.tcpFallback()) {
      return ShuffleConfigKeys.TCP_FALLBACK_KEY + "=false";
    }
    if (transportConf.openFailsWithoutVerbs()) {
      return TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY + "=true";
    }
    if (jobConf.getBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY,
        MRConfig.SHUFFLE_SSL_ENABLED_DEFAULT)) {
      return MRConfig.SHUFFLE_SSL_ENABLED_KEY + "=true (never plaintext over tcp)";
    }
    return null;
  }

  /** The tcp transport for hosts verbs cannot reach; null (logged) when it cannot open. */
  private Transport openTcp() {
    Configuration c = new Configuration(jobConf);
    c.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
    try {
      return TransportFactory.create(c);
    } catch (IOException | RuntimeException e) {
      LOG.warn("hpc shuffle: no tcp transport for hosts unreachable over {}: {}",
          transport.name(), e.toString());
      return null;
    }
  }

  private void switchToStock(int parallel) throws InterruptedException {
    stopFetchers();
    LOG.warn("hpc shuffle: falling back to the stock HTTP shuffle for the rest of {}: {} (set {}"
        + "=true to fail instead)", reduceId, fallbackReason,
        ShuffleConfigKeys.REDUCER_FAILS_WITHOUT_HPC_KEY);
    reporter.incrCounter(HpcShuffleCounter.FALLBACKS, 1);
    Task task = context.getReduceTask();
    for (int i = 0; i < parallel; i++) {
      Fetcher<K, V> f = new Fetcher<>(jobConf, reduceId, scheduler, merger, reporter, metrics,
          this, task.getShuffleSecret());
      stockFetchers.add(f);
      f.start();
    }
  }

  private void stopFetchers() throws InterruptedException {
    for (MapOutputFetcher<K, V> f : fetchers) {
      f.shutDown();
    }
    fetchers.clear();
    for (Fetcher<K, V> f : stockFetchers) {
      f.shutDown();
    }
  }

  /**
   * Asks the task to continue with stock's shuffle (or, under
   * {@code REDUCER_FAILS_WITHOUT_HPC_KEY}, to fail) because of
   * {@code reason}; the fetcher that calls this has put its maps back.
   */
  void requestFallback(String reason) {
    if (shuffleConf.reducerFailsWithoutHpc()) {
      reportException(new IOException("hpc shuffle required ("
          + ShuffleConfigKeys.REDUCER_FAILS_WITHOUT_HPC_KEY + "=true) but " + reason));
      return;
    }
    synchronized (this) {
      if (fallbackReason == null) {
        fallbackReason = reason;
      }
    }
    synchronized (scheduler) {
      scheduler.notifyAll();
    }
  }

  void countSharedBytes(long n) {
    reporter.incrCounter(HpcShuffleCounter.BYTES_FROM_LUSTRE, n);
  }

  boolean fallingBack() {
    return fallbackReason != null;
  }

  void countBytes(String transportName, long n) {
    reporter.incrCounter("verbs".equals(transportName) ? HpcShuffleCounter.BYTES_OVER_VERBS
        : HpcShuffleCounter.BYTES_OVER_TCP, n);
  }

  private synchronized void checkFailure() throws IOException {
    if (failure != null) {
      throw new IOException("error in hpc shuffle in " + failureThread + ": " + failure, failure);
    }
  }

  @Override
  public synchronized void reportException(Throwable t) {
    if (failure == null) {
      failure = t;
      failureThread = Thread.currentThread().getName();
      if (scheduler != null) {
        synchronized (scheduler) {
          scheduler.notifyAll();
        }
      }
    }
  }

  @Override
  public void close() {
    if (stock != null) {
      stock.close();
      return;
    }
    if (client != null) {
      client.close();
    }
    if (transport != null) {
      try {
        transport.close();
      } catch (IOException e) {
        LOG.warn("hpc shuffle: closing the {} transport failed", transport.name(), e);
      }
    }
  }

  /** For tests: why the task fell back, or null. */
  String fallbackReason() {
    return fallbackReason;
  }
}
