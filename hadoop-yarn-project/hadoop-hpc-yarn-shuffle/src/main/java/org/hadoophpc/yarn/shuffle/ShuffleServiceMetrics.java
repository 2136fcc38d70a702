/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import org.apache.hadoop.metrics2.annotation.Metric;
import org.apache.hadoop.metrics2.annotation.Metrics;
import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.apache.hadoop.metrics2.lib.MutableGaugeInt;
import org.apache.hadoop.metrics2.lib.MutableGaugeLong;
import org.apache.hadoop.metrics2.lib.MutableRate;

/**
 * The hpc shuffle's metrics, published through Hadoop metrics2 (JMX bean
 * {@code Hadoop:service=NodeManager,name=HpcShuffleMetrics}, and any configured sink).
 */
@Metrics(name = "HpcShuffleMetrics", about = "hadoop-hpc shuffle service", context = "mapred")
public class ShuffleServiceMetrics {
  @Metric("Map-output bytes sent to reducers")
  MutableCounterLong bytesServed;
  @Metric("Map-output bytes sent to reducers over verbs (RDMA)")
  MutableCounterLong bytesServedOverVerbs;
  @Metric("Map-output bytes sent to reducers over the tcp transport")
  MutableCounterLong bytesServedOverTcp;
  @Metric("Read requests: microseconds from arrival to the answer handed to the transport")
  MutableRate readAnswerMicros;
  @Metric("Read requests answered")
  MutableCounterLong readRequests;
  @Metric("Fetch sessions opened")
  MutableCounterLong sessionsOpened;
  @Metric("Open requests rejected: HMAC did not match the job token")
  MutableCounterLong authFailures;
  @Metric("Open requests for jobs whose token the service does not hold")
  MutableCounterLong unknownJobs;
  @Metric("Map outputs asked for but not found")
  MutableCounterLong outputsNotFound;
  @Metric("Requests failed by I/O errors or malformed input")
  MutableCounterLong errors;
  @Metric("Requests refused because the read queue was full")
  MutableCounterLong busyRejections;
  @Metric("Reads answered from pre-fetched memory")
  MutableCounterLong prefetchHits;
  @Metric("Fetch sessions open now")
  MutableGaugeInt openSessions;
  @Metric("Bytes held in pre-fetched chunks now")
  MutableGaugeLong prefetchBytes;
  @Metric("Registered transport memory in use now")
  MutableGaugeLong transportBytesInUse;
  @Metric("Open requests meant for another NodeManager's service on this host")
  MutableCounterLong wrongService;
  @Metric("Opens refused BUSY: the service (or the job, or the connection) holds as many fetch"
      + " sessions as it may")
  MutableCounterLong opensRefusedBySessionCap;
  @Metric("Opens refused BUSY: the service (or the job) holds as many map-output files open as it"
      + " may")
  MutableCounterLong opensRefusedByFileCap;
  @Metric("Opens refused as bad requests: more maps than open.maps.max, a map named twice, or one"
      + " not of the job")
  MutableCounterLong opensRefusedByMaps;
  @Metric("Connections closed to admit a newer one while too many had not proved a job token")
  MutableCounterLong untrustedEvicted;
  @Metric("Connections that closed before proving a job token (deadline passed, a frame rule"
      + " broken, or the peer left)")
  MutableCounterLong untrustedClosed;
  @Metric("Connections open now that have not proved a job token")
  MutableGaugeInt untrustedConnections;
  @Metric("1 while the hpc listener serves; 0 when it could not start (the log says why)"
      + " and only the stock HTTP shuffle serves")
  MutableGaugeInt listening;
  @Metric("Times the hpc listener could not start")
  MutableCounterLong listenerFailures;

  public long opensRefusedBySessionCap() {
    return opensRefusedBySessionCap.value();
  }

  public long opensRefusedByFileCap() {
    return opensRefusedByFileCap.value();
  }

  public long opensRefusedByMaps() {
    return opensRefusedByMaps.value();
  }

  public long untrustedEvicted() {
    return untrustedEvicted.value();
  }

  public long untrustedClosed() {
    return untrustedClosed.value();
  }

  public int untrustedConnections() {
    return untrustedConnections.value();
  }

  public long wrongService() {
    return wrongService.value();
  }

  public int listening() {
    return listening.value();
  }

  public long listenerFailures() {
    return listenerFailures.value();
  }

  public long bytesServed() {
    return bytesServed.value();
  }

  public long bytesServedOverVerbs() {
    return bytesServedOverVerbs.value();
  }

  public long bytesServedOverTcp() {
    return bytesServedOverTcp.value();
  }

  public long readRequests() {
    return readRequests.value();
  }

  public long sessionsOpened() {
    return sessionsOpened.value();
  }

  public long authFailures() {
    return authFailures.value();
  }

  public long unknownJobs() {
    return unknownJobs.value();
  }

  public long outputsNotFound() {
    return outputsNotFound.value();
  }

  public long errors() {
    return errors.value();
  }

  public long busyRejections() {
    return busyRejections.value();
  }

  public long prefetchHits() {
    return prefetchHits.value();
  }

  public int openSessions() {
    return openSessions.value();
  }

  public long prefetchBytes() {
    return prefetchBytes.value();
  }
}
