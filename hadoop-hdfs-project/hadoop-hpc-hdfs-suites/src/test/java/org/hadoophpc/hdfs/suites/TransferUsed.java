/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.suites;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;

import org.hadoophpc.hdfs.transfer.TransferMetrics;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;

/**
 * After each of Hadoop's test classes: its clients opened DataTransfer streams over the
 * transport and none went over TCP. Without this a suite could pass with the plugin silently
 * off (a test that builds its own configuration without our files). A class none of whose tests
 * ran (every one skipped by its own assumptions, e.g. short-circuit reads without libhadoop.so)
 * opened no stream: it is reported as skipped, not failed.
 */
public class TransferUsed implements AfterAllCallback, TestWatcher {
  private static final ExtensionContext.Namespace NS =
      ExtensionContext.Namespace.create(TransferUsed.class);

  @Override
  public void testSuccessful(ExtensionContext context) {
    ran(context);
  }

  @Override
  public void testFailed(ExtensionContext context, Throwable cause) {
    ran(context);
  }

  /** Counts a test that ran in the store of its outermost class (past parameterized levels). */
  private static void ran(ExtensionContext test) {
    ExtensionContext c = test;
    while (c.getParent().flatMap(ExtensionContext::getTestClass).isPresent()) {
      c = c.getParent().get();
    }
    c.getStore(NS).getOrComputeIfAbsent("ran", k -> new AtomicInteger(), AtomicInteger.class)
        .incrementAndGet();
  }

  @Override
  public void afterAll(ExtensionContext context) {
    TransferMetrics m = TransferMetrics.client();
    AtomicInteger ran = context.getStore(NS).get("ran", AtomicInteger.class);
    if (ran == null) {
      System.out.println("hpc transfer after " + context.getDisplayName()
          + ": no test ran (all skipped), nothing to check: " + m);
      return;
    }
    System.out.println("hpc transfer after " + context.getDisplayName() + ": " + m);
    assertTrue(m.connections(TransferMetrics.Role.CLIENT) > 0,
        "no client stream went over the transport: " + m);
    assertEquals(0, m.fallbacks(), "streams fell back to TCP: " + m);
  }
}
