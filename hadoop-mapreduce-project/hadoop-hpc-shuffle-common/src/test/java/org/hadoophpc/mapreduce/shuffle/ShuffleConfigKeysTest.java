/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys.REDUCER_FAILS_WITHOUT_HPC_DEPRECATED_KEY;
import static org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys.REDUCER_FAILS_WITHOUT_HPC_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.conf.ConfigKeysTestBase;
import org.hadoophpc.tools.DaemonCheck;
import org.junit.jupiter.api.Test;

/** {@link ShuffleConfigKeys} and hpc-shuffle-default.xml agree; bad values name their key. */
class ShuffleConfigKeysTest extends ConfigKeysTestBase {
  ShuffleConfigKeysTest() {
    super("hpc-shuffle-default.xml", ShuffleConfigKeys.class,
        ShuffleConfigKeys.HIBD_LUSTRE_MODE_KEY);
  }

  @Test
  void theDeprecatedStrictNameStillCountsAndTheNewNameWins() {
    Configuration old = new Configuration(false);
    old.setBoolean(REDUCER_FAILS_WITHOUT_HPC_DEPRECATED_KEY, true);
    assertTrue(ShuffleConf.from(old).reducerFailsWithoutHpc(), "set under the old name");
    old.setBoolean(REDUCER_FAILS_WITHOUT_HPC_KEY, false);
    assertFalse(ShuffleConf.from(old).reducerFailsWithoutHpc(), "the new name set after it");

    // as from the site files: the old name in mapred-site.xml, the new one in a later resource
    Configuration site = new Configuration(false);
    site.addResource(xml(REDUCER_FAILS_WITHOUT_HPC_DEPRECATED_KEY, "true"));
    assertTrue(ShuffleConf.from(site).reducerFailsWithoutHpc(), "old name in a site file");
    site.addResource(xml(REDUCER_FAILS_WITHOUT_HPC_KEY, "false"));
    assertFalse(ShuffleConf.from(site).reducerFailsWithoutHpc(), "new name in a later file");
  }

  /**
   * The scripts' port check (DaemonCheck, in hadoop-hpc-common below this module) keeps copies
   * of the service's listener keys.
   */
  @Test
  void daemonCheckKnowsTheServiceKeys() {
    assertEquals(ShuffleConfigKeys.PORT_KEY, DaemonCheck.HPC_SHUFFLE_PORT_KEY);
    assertEquals(ShuffleConfigKeys.PORT_RANGE_KEY, DaemonCheck.HPC_SHUFFLE_PORT_RANGE_KEY);
    assertEquals(ShuffleConfigKeys.PORT_RANGE_DEFAULT, DaemonCheck.HPC_SHUFFLE_PORT_RANGE_DEFAULT);
    assertEquals(ShuffleConfigKeys.BIND_HOST_KEY, DaemonCheck.HPC_SHUFFLE_BIND_HOST_KEY);
  }

  private static ByteArrayInputStream xml(String key, String value) {
    return new ByteArrayInputStream(("<configuration><property><name>" + key + "</name><value>"
        + value + "</value></property></configuration>").getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void defaultsLoadAndBadValuesNameTheirKey() {
    ShuffleConf dflt = ShuffleConf.from(new Configuration());
    assertEquals(ShuffleConfigKeys.PORT_DEFAULT, dflt.port());
    assertEquals(512 << 10, dflt.chunkSize("tcp", 16 << 20));
    assertEquals(1, dflt.fetchInflight("tcp"));
    assertEquals(1 << 20, dflt.chunkSize("verbs", 16 << 20));
    assertEquals(4, dflt.fetchInflight("verbs"));
    assertEquals(4096, dflt.chunkSize("verbs", 4096),
        "a chunk never exceeds one transport message");

    for (String[] bad : new String[][] {
        {ShuffleConfigKeys.CHUNK_SIZE_KEY, "100"},
        {ShuffleConfigKeys.CHUNK_SIZE_KEY, "lots"},
        {ShuffleConfigKeys.PORT_KEY, "70000"},
        {ShuffleConfigKeys.PORT_RANGE_KEY, "0"},
        {ShuffleConfigKeys.FETCH_INFLIGHT_KEY, "0"},
        {ShuffleConfigKeys.FETCH_INFLIGHT_KEY, "many"},
        {ShuffleConfigKeys.SERVER_IO_THREADS_KEY, "-1"},
        {ShuffleConfigKeys.PREFETCH_MAX_KEY, "-1"},
        {ShuffleConfigKeys.EVENTS_INTERVAL_KEY, "0"},
        {ShuffleConfigKeys.EVENTS_AM_BUDGET_KEY, "0"}}) {
      Configuration c = new Configuration(false);
      c.set(bad[0], bad[1]);
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ShuffleConf.from(c), bad[0] + "=" + bad[1]);
      assertTrue(e.getMessage().contains(bad[0]), e.getMessage());
    }
    Configuration ok = new Configuration(false);
    ok.set(ShuffleConfigKeys.CHUNK_SIZE_KEY, "65536");
    ok.set(ShuffleConfigKeys.FETCH_INFLIGHT_KEY, "3");
    for (String transport : new String[] {"tcp", "verbs"}) {
      assertEquals(65536, ShuffleConf.from(ok).chunkSize(transport, 1 << 30),
          "a configured chunk wins over " + transport + "'s");
      assertEquals(3, ShuffleConf.from(ok).fetchInflight(transport));
    }
  }

  @Test
  void eventPollsStayWithinTheAmBudgetAndNeverSlowerThanStock() {
    ShuffleConf dflt = ShuffleConf.from(new Configuration());
    assertEquals(100, dflt.eventsIntervalMs(1));
    assertEquals(100, dflt.eventsIntervalMs(20), "20 reducers x 10 polls/s = the 200/s budget");
    assertEquals(250, dflt.eventsIntervalMs(50));
    assertEquals(1000, dflt.eventsIntervalMs(5000), "never slower than stock's second");
    Configuration slow = new Configuration(false);
    slow.setInt(ShuffleConfigKeys.EVENTS_INTERVAL_KEY, 3000);
    assertEquals(3000, ShuffleConf.from(slow).eventsIntervalMs(1), "a slower interval is kept");
  }
}
