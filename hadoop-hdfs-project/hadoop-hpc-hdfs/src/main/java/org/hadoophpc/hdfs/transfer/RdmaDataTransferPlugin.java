/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import javax.net.SocketFactory;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.server.datanode.DataNode;
import org.apache.hadoop.hdfs.server.datanode.HpcDataNodeBridge;
import org.apache.hadoop.util.ServicePlugin;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves HDFS DataTransfer over the hpc transport next to TCP ({@code dfs.datanode.plugins}):
 * the DataNode's own stock {@code DataXceiverServer} accepts from a {@link TransferPeerServer}
 * that joins its TCP connections and the transport's streams (listening on the DataNode's
 * transfer address at port + {@code dfs.hpc.datatransfer.port.offset}), so block reads,
 * writes, checksums, tokens, SASL, xceiver limits and restart OOB acks are HDFS's own code.
 * Pipeline mirrors from this DataNode use the transport too ({@link RdmaSocketFactory} on its
 * transport). Started after the stock servers; a failure here leaves TCP serving and logs why.
 * Whether it listens at all is {@link TransferUse}'s rule (not on a node without RDMA unless
 * asked); its counters are the metrics2 source {@code HpcDataTransfer-<transfer port>}
 * ({@link TransferMetricsSource}).
 */
public class RdmaDataTransferPlugin implements ServicePlugin {
  private static final Logger LOG = LoggerFactory.getLogger(RdmaDataTransferPlugin.class);

  private Transport transport;
  private Listener listener;
  private TransferPeerServer peers;
  private TransferHandler handler;
  private ScheduledExecutorService timer;
  private DataNode dn;
  private SocketFactory stockFactory;
  private TransferMetrics metrics;
  private TransferMetricsSource source;

  @Override
  public void start(Object service) {
    dn = (DataNode) service;
    Configuration conf = dn.getConf();
    InetSocketAddress xfer = dn.getXferAddress();
    metrics = TransferMetrics.server(xfer.getPort());
    TransferConf tc;
    TransferUse.Decision use;
    try {
      tc = TransferConf.from(conf);
      use = TransferUse.decide(tc, conf, RdmaDevices::probe);
    } catch (IllegalArgumentException e) {
      stockTcp(true, e.getMessage());
      return;
    }
    if (use.stockTcp()) {
      stockTcp(false, use.whyStockTcp());
      return;
    }
    // HpcDataNode.prepare refuses this set-up before the DataNode starts; this covers
    // DataNodes started otherwise (a stock bin/hdfs, MiniDFSCluster).
    String insecure = PrivilegedPortCheck.problem(conf, xfer.getPort());
    if (insecure != null) {
      stockTcp(true, insecure);
      return;
    }
    try {
      transport = TransportFactory.create(conf);
      String fellBack = TransferUse.whyStockTcpOnceOpen(tc, conf, transport.name());
      if (fellBack != null) {
        closeTransport();
        stockTcp(false, fellBack);
        return;
      }
      if (tc.portOffset == 0 && "tcp".equals(transport.name())) {
        throw new IOException("the tcp transport cannot share the TCP transfer port "
            + xfer.getPort() + ": set " + TransferConfigKeys.PORT_OFFSET_KEY
            + " (same on every node)");
      }
      InetSocketAddress at = new InetSocketAddress(xfer.getAddress(),
          tc.endpointPort(xfer.getPort()));
      peers = new TransferPeerServer(tc.acceptQueue, transport.name() + "://" + at);
      timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "hpc transfer timer " + xfer.getPort());
        t.setDaemon(true);
        return t;
      });
      handler = new TransferHandler(transport.bufferPool(), tc, metrics, peers, xfer, timer);
      // The stock server closes its PeerServer, then sends restart OOB acks and closes its
      // peers (within 2 s): the transport those streams use goes a little later.
      peers.onClose(() -> {
        try {
          timer.schedule(this::closeTransport, 3, TimeUnit.SECONDS);
        } catch (RejectedExecutionException e) {
          closeTransport();
        }
      });
      if (!HpcDataNodeBridge.interposePeerServer(dn,
          stock -> peers.joining(stock, "hpc transfer tcp acceptor " + xfer.getPort()))) {
        throw new IOException("this Hadoop's DataXceiverServer has no peerServer field");
      }
      wakeStockServer(xfer);
      listener = transport.listen(at, handler);
    } catch (IOException | RuntimeException e) {
      closeTransport();
      stockTcp(true, e.getMessage());
      return;
    }
    metrics.usingTransport(transport);
    publish();
    TransferClient mirrors = new TransferClient(tc, transport, null, metrics,
        TransferMetrics.Role.MIRROR);
    stockFactory = HpcDataNodeBridge.setTransferSocketFactory(dn, new RdmaSocketFactory(mirrors));
    LOG.info("HDFS DataTransfer: {} transport listening on {} (TCP transfer port {}), mirrors "
        + "{}, stream.fails.without.transport={}", transport.name(), listener.address(),
        xfer.getPort(), stockFactory != null ? "over the transport" : "over TCP (no DataNode.socketFactory)",
        tc.streamFailsWithoutTransport);
  }

  /**
   * The stock server waits in the old TCP accept until one more connection comes: make it come,
   * so transport streams are served at once. It closes at once: the xceiver sees end of stream
   * before an operation, the benign case it logs at DEBUG.
   */
  private static void wakeStockServer(InetSocketAddress xfer) {
    InetSocketAddress to = xfer.getAddress().isAnyLocalAddress()
        ? new InetSocketAddress(InetAddress.getLoopbackAddress(), xfer.getPort()) : xfer;
    try (Socket s = new Socket()) {
      s.connect(to, 5000);
    } catch (IOException e) {
      LOG.warn("could not wake the DataNode's transfer server at {}: {}; transport streams are "
          + "served from its next TCP connection on", to, e.toString());
    }
  }

  /**
   * Registers the bean once the choice is made: the metrics system may snapshot a source as it
   * registers and JMX serve that snapshot for a period, so a bean registered earlier could say
   * "not started" after the choice (seen in the tarball test).
   */
  private void publish() {
    if (source == null) {
      source = TransferMetricsSource.register(metrics);
    }
  }

  /** The DataNode serves stock TCP only: one line (ERROR for a failure), and the bean says why. */
  private void stockTcp(boolean failure, String why) {
    metrics.usingStockTcp(why);
    publish();
    if (failure) {
      LOG.error("HDFS DataTransfer stays on stock TCP: {}", why);
    } else {
      LOG.info("HDFS DataTransfer: stock TCP only ({})", why);
    }
  }

  /** The counters of this DataNode's endpoint (null until started). */
  public TransferMetrics metrics() {
    return metrics;
  }

  @Override
  public void stop() {
    if (source != null) {
      source.unregister();
      source = null;
    }
    if (dn != null && stockFactory != null) {
      HpcDataNodeBridge.setTransferSocketFactory(dn, stockFactory);
      stockFactory = null;
    }
    if (listener != null) {
      listener.close(); // new streams are refused: clients use TCP; the port is free again
    }
    // the stock server closes the PeerServer (TCP and transport) when the DataNode stops
  }

  private synchronized void closeTransport() {
    if (timer != null) {
      timer.shutdown();
    }
    if (handler != null) {
      handler.closeAll();
    }
    if (listener != null) {
      listener.close();
    }
    if (transport != null) {
      try {
        transport.close();
      } catch (IOException e) {
        LOG.warn("closing the HDFS transfer transport: {}", e.getMessage());
      }
      transport = null;
    }
  }

  @Override
  public void close() {
    stop();
  }
}
