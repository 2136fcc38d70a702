/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.DataInputByteBuffer;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.token.SecretManager.InvalidToken;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.hadoophpc.mapreduce.lustre.SharedMapOutputs;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The NodeManager's {@code mapreduce_shuffle} auxiliary service with the hadoop-hpc shuffle
 * added: stock's {@link ShuffleHandler} (HTTP, for stock jobs and for reducers that fall back)
 * plus a listener on the transport (verbs on an RDMA device, tcp otherwise; see
 * {@link TransportFactory}) serving the same map outputs to the hpc reducer plugin.
 *
 * <p>Why a {@code ShuffleHandler} and not a second auxiliary service: the MapReduce AM gives the
 * job token (the shuffle secret) only to {@code mapreduce_shuffle}; services listed in
 * {@code mapreduce.job.shuffle.provider.services} receive an empty buffer (Hadoop 3.5.0,
 * {@code TaskAttemptImpl.addExternalShuffleProviders}: "This only serves for INIT_APP
 * notifications"). Without the token a service cannot check reducers, so ours sits where the
 * token arrives, and every fetch it serves is authenticated with it (stock's HMAC scheme).
 *
 * <p>yarn-site.xml: {@code yarn.nodemanager.aux-services.mapreduce_shuffle.class=}this class.
 * The class is outside {@code org.apache.hadoop}, so YARN may load it with its own classpath.
 */
public class HpcShuffleHandler extends ShuffleHandler {
  private static final Logger LOG = LoggerFactory.getLogger(HpcShuffleHandler.class);

  private final JobRegistry jobs = new JobRegistry(this::recoveredJob);
  private ShuffleConf conf;
  /**
   * The transports the service serves on: first its own (verbs, or tcp), then, over verbs, tcp
   * for reducers verbs cannot reach; empty when not serving. Replaced whole, never changed.
   */
  private volatile List<ServingTransport> serving = List.of();
  private MapOutputLocator locator;
  private ShuffleServiceMetrics metrics;
  private String metricsName;
  /** Where no-local-disks jobs publish map outputs (null: not configured on this node). */
  private SharedMapOutputs shared;
  private volatile ExecutorService cleaner;
  private int ioThreads;
  private int stockPort;
  /** Why our listener did not start (null while it serves). */
  private volatile String notStarted;

  /**
   * Starts stock's HTTP shuffle, then ours beside it. Nothing of ours may take the NodeManager
   * down: when our listener cannot start (bad setting, port taken, no device, TLS required on
   * tcp) one ERROR names the cause and the key, {@code HpcShuffleMetrics.Listening} stays 0, and
   * the stock shuffle serves alone (reducers fall back, or fail under strict, saying so).
   */
  @Override
  protected void serviceStart() throws Exception {
    super.serviceStart();
    stockPort = ShuffleHandler.deserializeMetaData(getMetaData());
    metrics = new ShuffleServiceMetrics();
    metricsName = "HpcShuffleMetrics";
    DefaultMetricsSystem.instance().register(metricsName, "hadoop-hpc shuffle service", metrics);
    try {
      startHpc(getConfig());
      metrics.listening.set(1);
    } catch (Exception e) {
      metrics.listenerFailures.incr();
      notStarted = e.getMessage();
      String what = "hpc shuffle NOT started on this NodeManager; only the stock HTTP shuffle"
          + " (port {}) serves: {}";
      if (e instanceof IOException || e instanceof IllegalArgumentException) {
        LOG.error(what, stockPort, e.getMessage()); // the message names the key
      } else {
        LOG.error(what, stockPort, e.getMessage(), e);
      }
      stopHpc();
    }
  }

  private void startHpc(Configuration c) throws Exception {
    conf = ShuffleConf.from(c);
    Configuration transportKeys = serviceTransportConf(c, conf);
    ioThreads = TransportConf.from(transportKeys).ioThreads();
    JobConf job = new JobConf(c);
    locator = new MapOutputLocator(getAuxiliaryLocalPathHandler(), job);
    if (!job.getTrimmed(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY,
        ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_DEFAULT).isEmpty()) {
      shared = SharedMapOutputs.from(job);
      if (!java.nio.file.Files.isDirectory(shared.root())) {
        try {
          java.nio.file.Files.createDirectories(shared.root());
          LOG.info("hpc shuffle: created {}={}", ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY, shared);
        } catch (IOException e) {
          throw new IOException("cannot create " + ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + "="
              + shared + " (" + e + "): is the shared file system mounted on this node?", e);
        }
      }
      cleaner = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "hpc-lustre-cleaner");
        t.setDaemon(true);
        return t;
      });
      LOG.info("hpc shuffle: deletes the map outputs ended jobs published under {} ({})", shared,
          ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY);
    }
    String host = bindHost(c, conf);
    ServingTransport primary = ServingTransport.open(transportKeys, conf, stockPort, host, jobs,
        locator, metrics, name -> tlsRefusal(c, name, conf), this::handler);
    serving = List.of(primary);
    LOG.info("hpc shuffle serving map outputs on {} over {} next to the stock shuffle on port"
        + " {} ({}; registered memory bound {} bytes)", primary.address(), primary.name(),
        stockPort, conf, primary.transport.bufferPool().maxBytes());
    if (c.getBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY,
        MRConfig.SHUFFLE_SSL_ENABLED_DEFAULT)) {
      LOG.warn("hpc shuffle: serving plaintext over verbs although {}=true, because {}=true",
          MRConfig.SHUFFLE_SSL_ENABLED_KEY, ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY);
    }
    if (!"tcp".equals(primary.name()) && conf.tcpFallback()) {
      String refusal = tlsRefusal(c, "tcp", conf);
      if (refusal != null) {
        LOG.info("hpc shuffle: no tcp listener for reducers {} cannot reach: {}", primary.name(),
            refusal);
        return;
      }
      Configuration tcpKeys = new Configuration(transportKeys);
      tcpKeys.set(TransportConfigKeys.TRANSPORT_KEY, "tcp");
      ServingTransport overTcp;
      try {
        overTcp = ServingTransport.open(tcpKeys, conf, stockPort, host, jobs, locator, metrics,
            name -> null, this::handler);
      } catch (IOException | RuntimeException e) {
        // the service still serves over its own transport; only verbs-less reducers lose it
        LOG.warn("hpc shuffle: no tcp listener for reducers {} cannot reach: {}", primary.name(),
            e.getMessage());
        return;
      }
      serving = List.of(primary, overTcp);
      LOG.info("hpc shuffle also serving over tcp on {} for reducers that cannot reach it over"
          + " {} ({})", overTcp.address(), primary.name(), ShuffleConfigKeys.TCP_FALLBACK_KEY);
    }
  }

  /**
   * Why the hpc listener must not serve on {@code transport} while stock's shuffle is on TLS, or
   * null when it may: never plaintext over tcp; over verbs only when the admin declared the
   * fabric trusted ({@code mapreduce.hpc.shuffle.ssl.verbs.plaintext=true}).
   */
  static String tlsRefusal(Configuration nm, String transport, ShuffleConf shuffle) {
    if (!nm.getBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY,
        MRConfig.SHUFFLE_SSL_ENABLED_DEFAULT)) {
      return null;
    }
    if (!"verbs".equals(transport)) {
      return MRConfig.SHUFFLE_SSL_ENABLED_KEY + "=true and the hpc shuffle would serve plaintext"
          + " over " + transport + ": jobs use the stock (TLS) shuffle";
    }
    if (!shuffle.sslVerbsPlaintext()) {
      return MRConfig.SHUFFLE_SSL_ENABLED_KEY
          + "=true and the hpc shuffle does not encrypt: set "
          + ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY + "=true to serve plaintext over verbs on"
          + " a trusted fabric";
    }
    return null;
  }

  /**
   * Where the listener binds: {@code mapreduce.hpc.shuffle.bind-host}, else where the
   * NodeManager binds ({@code yarn.nodemanager.bind-host}, else the host of
   * {@code yarn.nodemanager.address} unless it is a wildcard), else all interfaces.
   */
  static String bindHost(Configuration c, ShuffleConf shuffle) {
    if (!shuffle.bindHost().isEmpty()) {
      return shuffle.bindHost();
    }
    String nm = c.getTrimmed("yarn.nodemanager.bind-host", "");
    if (!nm.isEmpty()) {
      return nm;
    }
    String address = c.getTrimmed("yarn.nodemanager.address", "");
    int colon = address.lastIndexOf(':');
    String host = colon >= 0 ? address.substring(0, colon) : address;
    if (host.startsWith("[") && host.endsWith("]")) {
      host = host.substring(1, host.length() - 1);
    }
    if (host.isEmpty() || host.equals("0.0.0.0") || host.equals("::") || host.contains("$")) {
      return "0.0.0.0";
    }
    return host;
  }

  /**
   * The transport keys the service runs with: the NodeManager's, with {@code
   * mapreduce.hpc.shuffle.server.io.threads} event threads when that is not 0.
   */
  static Configuration serviceTransportConf(Configuration nm, ShuffleConf shuffle) {
    if (shuffle.serverIoThreads() == 0) {
      return nm;
    }
    Configuration c = new Configuration(nm);
    c.setInt(TransportConfigKeys.IO_THREADS_KEY, shuffle.serverIoThreads());
    return c;
  }

  /**
   * The handler the listener serves with: {@code server} itself. Tests wrap it to make the
   * service misbehave the way a sick node would.
   */
  protected RequestHandler handler(RequestHandler server) {
    return server;
  }

  /** Releases whatever of ours started (after a failed start, and at stop). */
  private void stopHpc() {
    List<ServingTransport> was = serving;
    serving = List.of();
    for (int i = was.size() - 1; i >= 0; i--) {
      was.get(i).close();
    }
    if (cleaner != null) {
      cleaner.shutdown();
      try {
        cleaner.awaitTermination(30, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      cleaner = null;
    }
  }

  @Override
  protected void serviceStop() throws Exception {
    try {
      stopHpc();
      if (metricsName != null) {
        DefaultMetricsSystem.instance().unregisterSource(metricsName);
      }
    } finally {
      super.serviceStop();
    }
  }

  @Override
  public void initializeApplication(ApplicationInitializationContext context) {
    ApplicationId app = context.getApplicationId();
    String jobId = jobId(app);
    ByteBuffer data = context.getApplicationDataForService();
    try {
      // read a view: stock's handler reads the same buffer after us
      ByteBuffer view = data.duplicate();
      DataInputByteBuffer in = new DataInputByteBuffer();
      in.reset(view);
      Token<JobTokenIdentifier> token = new Token<>();
      token.readFields(in);
      jobs.add(jobId, context.getUser(), app.toString(), token.getPassword());
      LOG.info("hpc shuffle: serving {} of user {}", jobId, context.getUser());
    } catch (IOException | RuntimeException e) {
      // no token: the job's hpc fetches are refused (its reducers fall back to stock)
      LOG.error("hpc shuffle: cannot read the job token of {} ({}); its reducers will be"
          + " refused", app, e.toString());
    }
    super.initializeApplication(context);
  }

  @Override
  public void stopApplication(ApplicationTerminationContext context) {
    String jobId = jobId(context.getApplicationId());
    List<ServingTransport> now = serving;
    if (jobs.remove(jobId) != null && !now.isEmpty()) {
      for (ServingTransport t : now) {
        t.server.closeJob(jobId);
      }
      if (locator != null) {
        locator.forgetJob(jobId);
      }
      LOG.info("hpc shuffle: {} finished; its sessions and cached indexes are gone", jobId);
    }
    ExecutorService c = cleaner;
    if (c != null) {
      try {
        c.execute(() -> deleteShared(jobId));
      } catch (java.util.concurrent.RejectedExecutionException e) {
        LOG.debug("hpc shuffle stopping: {} not cleaned here", jobId);
      }
    }
    super.stopApplication(context);
    // a request between our removal and stock's may have looked the job up again through
    // recoveredJob(); stock has forgotten it now, so this removal is final
    jobs.remove(jobId);
  }

  /** Deletes what {@code jobId} published on the shared mount (every node tries; idempotent). */
  private void deleteShared(String jobId) {
    try {
      if (shared.deleteJob(jobId)) {
        LOG.info("hpc shuffle: deleted the map outputs {} published in {}", jobId,
            shared.jobDir(jobId));
      }
    } catch (IOException | RuntimeException e) {
      LOG.warn("hpc shuffle: cannot delete the map outputs of {} in {}: {} (delete it by hand)",
          jobId, shared.jobDir(jobId), e.toString());
    }
  }


  private static String jobId(ApplicationId app) {
    return new JobID(Long.toString(app.getClusterTimestamp()), app.getId()).toString();
  }

  /**
   * A job stock's handler serves and our registry does not hold: one stock recovered from the
   * NodeManager's state store after a restart (YARN does not initialize it again). Null when
   * stock does not know it either, or the id is not a canonical job id.
   */
  private JobRegistry.Job recoveredJob(String jobId) {
    Map<String, String> users = userRsrc;
    JobTokenSecretManager tokens = secretManager;
    if (users == null || tokens == null) {
      return null; // not started
    }
    String user = users.get(jobId);
    if (user == null) {
      return null;
    }
    JobID id;
    try {
      id = JobID.forName(jobId);
      if (!id.toString().equals(jobId)) {
        return null;
      }
      SecretKey key = tokens.retrieveTokenSecret(jobId);
      ApplicationId app = ApplicationId.newInstance(Long.parseLong(id.getJtIdentifier()),
          id.getId());
      LOG.info("hpc shuffle: serving {} of user {} (recovered by the NodeManager)", jobId, user);
      return new JobRegistry.Job(jobId, user, app.toString(), key);
    } catch (IllegalArgumentException | InvalidToken e) {
      return null;
    }
  }

  /** Why the hpc listener did not start, or null when it serves. */
  public String notStartedReason() {
    return notStarted;
  }

  /** The stock shuffle port of this NodeManager (the identity reducers check). */
  public int stockPort() {
    return stockPort;
  }

  /** The address the hpc shuffle listens on; null before start. */
  public InetSocketAddress address() {
    List<ServingTransport> now = serving;
    return now.isEmpty() ? null : now.get(0).address();
  }

  /**
   * Over verbs, where the service also listens over tcp for reducers verbs cannot reach
   * ({@code mapreduce.hpc.shuffle.tcp.fallback}); null otherwise.
   */
  public InetSocketAddress tcpFallbackAddress() {
    List<ServingTransport> now = serving;
    return now.size() < 2 ? null : now.get(1).address();
  }

  /** Event threads of the service's transport (tcp; verbs uses one loop whatever this says). */
  int ioThreads() {
    return ioThreads;
  }

  public String transportName() {
    List<ServingTransport> now = serving;
    return now.isEmpty() ? null : now.get(0).name();
  }

  public ShuffleServiceMetrics metrics() {
    return metrics;
  }

  /** Bytes of the service's transport pool in use now (0 when not started). */
  public long poolBytesInUse() {
    return serving.stream().mapToLong(t -> t.transport.bufferPool().usedBytes()).sum();
  }

  /** Jobs whose token the hpc shuffle holds. */
  public int jobCount() {
    return jobs.size();
  }

  /** Fetch sessions open now. */
  public int openSessions() {
    return serving.stream().mapToInt(t -> t.server.openSessions()).sum();
  }
}
