/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.junit.jupiter.api.Test;

/**
 * Which jobs' reducers use stock's shuffle from the start, strict or not: local map outputs,
 * encrypted intermediate data, a TLS shuffle without verbs. (Hadoop's own
 * TestMRIntermediateDataEncryption and TestEncryptedShuffle run such jobs whole, strict, in
 * hadoop-hpc-hadoop-suites.)
 */
class StockReasonTest {
  private static JobConf job() {
    JobConf c = new JobConf(false);
    c.setBoolean(ShuffleConfigKeys.REDUCER_FAILS_WITHOUT_HPC_KEY, true);
    c.set("hadoop.hpc.transport", "tcp");
    return c;
  }

  @Test
  void aPlainJobUsesTheHpcShuffle() {
    assertNull(HpcShuffleConsumer.stockReason(job(), false));
  }

  @Test
  void localMapOutputsUseStock() {
    assertTrue(HpcShuffleConsumer.stockReason(job(), true).contains("local"));
  }

  @Test
  void encryptedIntermediateDataUsesStockEvenWhenStrict() {
    JobConf c = job();
    c.setBoolean(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA, true);
    String why = HpcShuffleConsumer.stockReason(c, false);
    assertTrue(why != null && why.contains(MRJobConfig.MR_ENCRYPTED_INTERMEDIATE_DATA), why);
  }

  @Test
  void aTlsShuffleUsesStockUnlessPlaintextOverVerbsIsAllowed() {
    JobConf c = job();
    c.setBoolean(MRConfig.SHUFFLE_SSL_ENABLED_KEY, true);
    String why = HpcShuffleConsumer.stockReason(c, false);
    assertTrue(why != null && why.contains(ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY), why);
    c.setBoolean(ShuffleConfigKeys.SSL_VERBS_PLAINTEXT_KEY, true);
    why = HpcShuffleConsumer.stockReason(c, false); // allowed, but the transport here is tcp
    assertTrue(why != null && why.contains("not verbs"), why);
  }
}
