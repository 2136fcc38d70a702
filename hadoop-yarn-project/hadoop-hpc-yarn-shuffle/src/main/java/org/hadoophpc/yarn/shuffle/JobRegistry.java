/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;

/**
 * Jobs the service may serve: their user, application id and job-token secret. Jobs come from
 * {@code initializeApplication}, or, for a job this registry has not seen, from a fallback that
 * asks stock's handler: after a NodeManager restart with recovery, stock re-reads its jobs'
 * tokens from the state store and YARN does not initialize those applications again.
 */
final class JobRegistry {

  /** One job: {@code appId} names its directory under {@code usercache/<user>/appcache}. */
  record Job(String jobId, String user, String appId, SecretKey secret) {
  }

  private final Map<String, Job> jobs = new ConcurrentHashMap<>();
  private final Function<String, Job> recovered;

  /** @param recovered a job this registry does not hold, or null when nobody knows it */
  JobRegistry(Function<String, Job> recovered) {
    this.recovered = recovered;
  }

  void add(String jobId, String user, String appId, byte[] password) {
    jobs.put(jobId, new Job(jobId, user, appId, JobTokenSecretManager.createSecretKey(password)));
  }

  Job get(String jobId) {
    Job j = jobs.get(jobId);
    if (j == null) {
      j = recovered.apply(jobId);
      if (j != null) {
        Job raced = jobs.putIfAbsent(jobId, j);
        j = raced != null ? raced : j;
      }
    }
    return j;
  }

  Job remove(String jobId) {
    return jobs.remove(jobId);
  }

  int size() {
    return jobs.size();
  }
}
