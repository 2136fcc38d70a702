/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.suites;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.hadoophpc.hdfs.transfer.TransferMetrics;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * After each of Hadoop's test classes: its clients opened DataTransfer streams over the
 * transport and none went over TCP. Without this a suite could pass with the plugin silently
 * off (a test that builds its own configuration without our files).
 */
public class TransferUsed implements AfterAllCallback {
  @Override
  public void afterAll(ExtensionContext context) {
    TransferMetrics m = TransferMetrics.client();
    System.out.println("hpc transfer after " + context.getDisplayName() + ": " + m);
    assertTrue(m.connections(TransferMetrics.Role.CLIENT) > 0,
        "no client stream went over the transport: " + m);
    assertEquals(0, m.fallbacks(), "streams fell back to TCP: " + m);
  }
}
