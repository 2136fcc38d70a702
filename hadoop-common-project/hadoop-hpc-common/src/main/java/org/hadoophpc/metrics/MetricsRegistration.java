/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.metrics;

import org.apache.hadoop.metrics2.MetricsSource;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers our metrics2 sources with the process's metrics system without ever failing the
 * caller: a data path must not stop because its metrics could not be shown (one WARN line
 * instead). Where the process started a metrics system (every Hadoop daemon and task), a
 * source is also a JMX bean {@code Hadoop:service=<process>,name=<source name>}.
 */
public final class MetricsRegistration {
  private static final Logger LOG = LoggerFactory.getLogger(MetricsRegistration.class);

  private MetricsRegistration() {
  }

  /** Registers {@code source} as {@code name}; false (and one WARN) when it cannot. */
  public static boolean register(String name, String description, MetricsSource source) {
    try {
      DefaultMetricsSystem.instance().register(name, description, source);
      return true;
    } catch (RuntimeException e) {
      LOG.warn("metrics source {} not registered: {}", name, e.toString());
      return false;
    }
  }

  /** Unregisters the source {@code name}; a failure is one WARN. */
  public static void unregister(String name) {
    try {
      DefaultMetricsSystem.instance().unregisterSource(name);
    } catch (RuntimeException e) {
      LOG.warn("metrics source {} not unregistered: {}", name, e.toString());
    }
  }
}
