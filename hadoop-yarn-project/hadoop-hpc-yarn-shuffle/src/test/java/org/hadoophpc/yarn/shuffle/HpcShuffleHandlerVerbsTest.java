/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link HpcShuffleHandlerTest} over the verbs transport: real map-output files fetched over
 * RDMA, service and reducers on the device's IPv4 address ({@link RdmaTestDevice}: skips
 * without a device, fails in the Soft-RoCE lane). Strict transport: a silent fall back to tcp
 * would fail the test.
 */
class HpcShuffleHandlerVerbsTest extends HpcShuffleHandlerTest {
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
  protected boolean sendsFromFiles() {
    return false; // verbs reads chunks into registered memory
  }

  @Override
  protected String servedOver() {
    return "verbs";
  }

  @Override
  protected String host() {
    return rdma.host();
  }
}
