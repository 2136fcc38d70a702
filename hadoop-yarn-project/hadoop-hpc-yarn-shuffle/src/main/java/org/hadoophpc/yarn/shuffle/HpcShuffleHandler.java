/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.io.DataInputByteBuffer;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.ApplicationTerminationContext;
import org.hadoophpc.mapreduce.lustre.SharedMapOutputs;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.Transport;
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

  private final JobRegistry jobs = new JobRegistry();
  private ShuffleConf conf;
  private Transport transport;
  private Listener listener;
  private MapOutputServer server;
  private MapOutputLocator locator;
  private ShuffleServiceMetrics metrics;
  private String metricsName;
  /** Where no-local-disks jobs publish map outputs (null: not configured on this node). */
  private SharedMapOutputs shared;
  private ExecutorService cleaner;
  private int ioThreads;

  @Override
  protected void serviceInit(Configuration configuration) throws Exception {
    conf = ShuffleConf.from(configuration);
    TransportConf.from(configuration); // bad transport keys stop the NodeManager here, named
    super.serviceInit(configuration);
  }

  @Override
  protected void serviceStart() throws Exception {
    super.serviceStart();
    Configuration c = getConfig();
    Configuration transportKeys = serviceTransportConf(c, conf);
    TransportConf tc = TransportConf.from(transportKeys);
    metrics = new ShuffleServiceMetrics();
    metricsName = "HpcShuffleMetrics";
    DefaultMetricsSystem.instance().register(metricsName, "hadoop-hpc shuffle service", metrics);
    transport = TransportFactory.create(transportKeys);
    ioThreads = tc.ioThreads();
    JobConf job = new JobConf(c);
    locator = new MapOutputLocator(getAuxiliaryLocalPathHandler(), job);
    if (!job.getTrimmed(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY, "").isEmpty()) {
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
    server = new MapOutputServer(transport.bufferPool(), jobs, locator, conf, tc.ioTimeoutMs(),
        metrics);
    listener = bind();
    LOG.info("hpc shuffle serving map outputs on {} over {} next to the stock shuffle on port"
        + " {} ({}; registered memory bound {} bytes)", listener.address(), transport.name(),
        c.get(SHUFFLE_PORT_CONFIG_KEY), conf, transport.bufferPool().maxBytes());
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

  /** Binds the first free port of the configured range. */
  private Listener bind() throws IOException {
    IOException last = null;
    String host = conf.bindHost().isEmpty() ? "0.0.0.0" : conf.bindHost();
    for (int i = 0; i < conf.portRange(); i++) {
      InetSocketAddress at = new InetSocketAddress(host, conf.port() + i);
      try {
        return transport.listen(at, server);
      } catch (IOException e) {
        last = e;
        LOG.debug("hpc shuffle: {} is taken: {}", at, e.toString());
      }
    }
    String ports = conf.portRange() == 1 ? Integer.toString(conf.port())
        : conf.port() + "-" + (conf.port() + conf.portRange() - 1);
    BindException e = new BindException("hpc shuffle cannot listen on " + host + " port " + ports
        + " over " + transport.name() + " (" + (last == null ? "" : last.getMessage())
        + "): stop whatever holds it or change " + ShuffleConfigKeys.PORT_KEY
        + (conf.portRange() == 1 ? "" : " / " + ShuffleConfigKeys.PORT_RANGE_KEY));
    e.initCause(last);
    throw e;
  }

  @Override
  protected void serviceStop() throws Exception {
    try {
      if (listener != null) {
        listener.close();
      }
      if (server != null) {
        server.close();
      }
      if (transport != null) {
        transport.close();
      }
      if (metricsName != null) {
        DefaultMetricsSystem.instance().unregisterSource(metricsName);
      }
      if (cleaner != null) {
        cleaner.shutdown();
        cleaner.awaitTermination(30, TimeUnit.SECONDS);
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
    if (jobs.remove(jobId) != null && server != null) {
      server.closeJob(jobId);
      locator.forgetJob(jobId);
      LOG.info("hpc shuffle: {} finished; its sessions and cached indexes are gone", jobId);
    }
    if (cleaner != null) {
      cleaner.execute(() -> deleteShared(jobId));
    }
    super.stopApplication(context);
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

  /** The address the hpc shuffle listens on; null before start. */
  public InetSocketAddress address() {
    return listener == null ? null : listener.address();
  }

  /** Event threads of the service's transport (tcp; verbs uses one loop whatever this says). */
  int ioThreads() {
    return ioThreads;
  }

  public String transportName() {
    return transport == null ? null : transport.name();
  }

  public ShuffleServiceMetrics metrics() {
    return metrics;
  }

  /** Jobs whose token the hpc shuffle holds. */
  public int jobCount() {
    return jobs.size();
  }

  /** Fetch sessions open now. */
  public int openSessions() {
    return server == null ? 0 : server.openSessions();
  }
}
