/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import javax.crypto.SecretKey;

import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;

/** Jobs the service may serve: their user, application id and job-token secret. */
final class JobRegistry {

  /** One job: {@code appId} names its directory under {@code usercache/<user>/appcache}. */
  record Job(String jobId, String user, String appId, SecretKey secret) {
  }

  private final Map<String, Job> jobs = new ConcurrentHashMap<>();

  void add(String jobId, String user, String appId, byte[] password) {
    jobs.put(jobId, new Job(jobId, user, appId, JobTokenSecretManager.createSecretKey(password)));
  }

  Job get(String jobId) {
    return jobs.get(jobId);
  }

  Job remove(String jobId) {
    return jobs.remove(jobId);
  }

  int size() {
    return jobs.size();
  }
}
