/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

/**
 * The shuffle service's bounds ({@code mapreduce.hpc.shuffle.server.*}, see
 * {@link ShuffleConfigKeys}): fetch sessions and open map-output files, in total and per job;
 * maps per open; connections that have not proved a job token yet, in total and per address.
 * Immutable; read once by {@link ShuffleConf}.
 */
public record ServiceLimits(int sessions, int sessionsPerJob, int files, int filesPerJob,
    int openMaps, int untrusted, int untrustedPerAddress) {

  /**
   * Most bytes an open naming {@link #openMaps} maps takes on the wire (ids of up to 100
   * characters: canonical attempt ids are about 40), at least 8 KiB: the most a peer may send
   * before it proved a job token.
   */
  public int openBytes() {
    return Math.max(8192, 1024 + openMaps * 102);
  }
}
