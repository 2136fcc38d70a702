/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link TcpFallbackTest} with the service on verbs (strict): it also listens over tcp, and a
 * reducer that cannot reach it over verbs fetches over tcp ({@link RdmaTestDevice}: skips
 * without a device, fails in the Soft-RoCE lane).
 */
class TcpFallbackVerbsTest extends TcpFallbackTest {
  private static RdmaTestDevice rdma;

  @BeforeAll
  static void findDevice() {
    rdma = RdmaTestDevice.require();
  }

  @Override
  protected void configureTransport(Configuration conf) {
    rdma.configure(conf);
  }

  @Override
  protected String host() {
    return rdma.host();
  }
}
