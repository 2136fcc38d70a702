/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** {@link ShuffleConfigKeys} and hpc-shuffle-default.xml agree; bad values name their key. */
class ShuffleConfigKeysTest {

  @Test
  void classAndDefaultXmlAgree() throws Exception {
    Configuration xml = new Configuration(false);
    xml.addResource("hpc-shuffle-default.xml");
    String text;
    try (InputStream in = getClass().getClassLoader()
        .getResourceAsStream("hpc-shuffle-default.xml")) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Set<String> keys = new HashSet<>();
    for (Field f : ShuffleConfigKeys.class.getFields()) {
      if (!Modifier.isStatic(f.getModifiers()) || !f.getName().endsWith("_KEY")) {
        continue;
      }
      String key = (String) f.get(null);
      keys.add(key);
      assertTrue(text.contains("<name>" + key + "</name>"), key + " missing from the XML");
      Field d = ShuffleConfigKeys.class.getField(f.getName().replaceFirst("_KEY$", "_DEFAULT"));
      String inXml = xml.getRaw(key) == null ? "" : xml.getRaw(key).trim();
      assertEquals(String.valueOf(d.get(null)), inXml, "default of " + key);
    }
    for (Map.Entry<String, String> e : xml) {
      assertTrue(keys.contains(e.getKey()), e.getKey() + " is in the XML but not the class");
    }
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
