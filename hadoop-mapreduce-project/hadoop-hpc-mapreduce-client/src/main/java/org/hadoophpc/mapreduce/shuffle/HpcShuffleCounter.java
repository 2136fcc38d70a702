/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

/**
 * Counters the hpc shuffle adds next to the standard shuffle counters (group "HPC Shuffle").
 */
public enum HpcShuffleCounter {
  /** Map-output bytes fetched over the verbs (RDMA) transport. */
  BYTES_OVER_VERBS,
  /** Map-output bytes fetched over the tcp transport. */
  BYTES_OVER_TCP,
  /** Map-output bytes read straight from the shared Lustre mount (no-local-disks mode). */
  BYTES_FROM_LUSTRE,
  /** Reduce tasks that fell back to the stock HTTP shuffle (the task log says why). */
  FALLBACKS,
  /**
   * Map hosts a reducer on verbs could not reach over verbs and fetched from over tcp instead
   * ({@code mapreduce.hpc.shuffle.tcp.fallback}; the task log names each host and why).
   */
  HOSTS_OVER_TCP,
  /**
   * Reduce tasks that used the stock shuffle from the start because the job asked for encryption
   * the hpc path does not give ({@code mapreduce.shuffle.ssl.enabled} on tcp, or encrypted
   * intermediate data); the task log says which.
   */
  STOCK_FOR_ENCRYPTION
}
