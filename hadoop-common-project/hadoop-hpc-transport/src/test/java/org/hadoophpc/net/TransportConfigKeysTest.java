/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.lang.reflect.Modifier;
import java.util.Map;
import java.util.TreeMap;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

/** Every key of {@link TransportConfigKeys} is in hpc-default.xml with the same default. */
class TransportConfigKeysTest {

  @Test
  void classAndDefaultXmlAgree() throws Exception {
    Configuration xml = new Configuration(false);
    xml.addResource("hpc-default.xml");
    String text;
    try (InputStream in = getClass().getClassLoader().getResourceAsStream("hpc-default.xml")) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    Map<String, String> keys = new TreeMap<>();
    for (Field f : TransportConfigKeys.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getName().endsWith("_KEY")) {
        String key = (String) f.get(null);
        keys.put(key, f.getName());
        // Configuration drops empty values, so presence is checked in the text
        assertTrue(text.contains("<name>" + key + "</name>"),
            key + " (" + f.getName() + ") is missing from hpc-default.xml");
        String inXml = xml.getRaw(key) == null ? "" : xml.getRaw(key).trim();
        String dflt = f.getName().replaceFirst("_KEY$", "_DEFAULT");
        Field d;
        try {
          d = TransportConfigKeys.class.getField(dflt);
        } catch (NoSuchFieldException e) {
          continue; // aliases without a default of their own
        }
        assertEquals(String.valueOf(d.get(null)), inXml,
            "default of " + key + ": " + dflt + " vs hpc-default.xml");
      }
    }
    for (Map.Entry<String, String> e : xml) {
      if (e.getKey().startsWith("hadoop.hpc.transport") || e.getKey().startsWith("hadoop.ib")
          || e.getKey().startsWith("hadoop.roce") || e.getKey().startsWith("hadoop.rdma")) {
        assertNotNull(keys.get(e.getKey()), e.getKey() + " is in hpc-default.xml but not in "
            + "TransportConfigKeys");
      }
    }
  }

  @Test
  void defaultsParse() {
    TransportConf c = TransportConf.from(new Configuration(false));
    assertEquals(TransportConf.Kind.AUTO, c.kind());
    assertEquals(16 << 20, c.maxMessageSize());
    assertEquals(256L << 20, c.bufferPoolMax());
  }
}
