/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.io.IOException;

import org.apache.hadoop.hdfs.protocol.BlockStoragePolicy;
import org.apache.hadoop.hdfs.server.namenode.NameNode;
import org.apache.hadoop.hdfs.server.protocol.NamenodeProtocols;
import org.apache.hadoop.util.ServicePlugin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NameNode plugin ({@code dfs.namenode.plugins}) that makes the configured HHH mode the file
 * system's default: once the NameNode has left safe mode it gives {@code /} the mode's storage
 * policy ({@link HhhMode#rootPolicy()}: ONE_SSD for hhh, LAZY_PERSIST for hhh-m and hhh-l), so
 * every file without a policy of its own follows the mode. Directories and files with their own
 * policy keep it. Mode off leaves {@code /} alone.
 */
public final class HhhNameNodePlugin implements ServicePlugin {
  private static final Logger LOG = LoggerFactory.getLogger(HhhNameNodePlugin.class);
  private static final long RETRY_MS = 500;

  private Thread applier;

  @Override
  public void start(Object service) {
    NameNode nn = (NameNode) service;
    HhhMode mode = HhhMode.from(nn.getConf());
    if (mode.rootPolicy() == null) {
      LOG.info("HHH mode {}: the root's storage policy is left as it is", mode);
      return;
    }
    applier = new Thread(() -> apply(nn, mode), "hhh root storage policy");
    applier.setDaemon(true);
    applier.start();
  }

  private static void apply(NameNode nn, HhhMode mode) {
    NamenodeProtocols rpc = nn.getRpcServer();
    while (!Thread.currentThread().isInterrupted()) {
      try {
        if (nn.isInSafeMode() || !nn.isActiveState()) {
          Thread.sleep(RETRY_MS);
          continue;
        }
        BlockStoragePolicy now = rpc.getStoragePolicy("/");
        if (now == null || !mode.rootPolicy().equals(now.getName())) {
          rpc.setStoragePolicy("/", mode.rootPolicy());
          LOG.info("HHH mode {}: storage policy of / set to {} (was {})", mode,
              mode.rootPolicy(), now == null ? "unset" : now.getName());
        } else {
          LOG.info("HHH mode {}: storage policy of / is {}", mode, mode.rootPolicy());
        }
        return;
      } catch (InterruptedException e) {
        return;
      } catch (IOException e) {
        LOG.warn("HHH mode {}: cannot set the storage policy of / to {} yet: {}", mode,
            mode.rootPolicy(), e.getMessage());
        try {
          Thread.sleep(RETRY_MS * 10);
        } catch (InterruptedException ie) {
          return;
        }
      }
    }
  }

  @Override
  public void stop() {
    if (applier != null) {
      applier.interrupt();
    }
  }

  @Override
  public void close() {
    stop();
  }
}
