/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import static org.hadoophpc.net.TransportConfigKeys.MAX_MESSAGE_SIZE_KEY;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

class TransportConfTest {

  private static Configuration conf(String key, String value) {
    Configuration c = new Configuration(false);
    c.set(key, value);
    return c;
  }

  @Test
  void messagesBelow8kAreAConfigurationErrorNamingTheKey() {
    for (String small : new String[] {"4k", "1k"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> TransportConf.from(conf(MAX_MESSAGE_SIZE_KEY, small)));
      assertTrue(e.getMessage().startsWith(MAX_MESSAGE_SIZE_KEY + "="), e.getMessage());
      assertTrue(e.getMessage().contains("at least 8192"), e.getMessage());
    }
    assertEquals(8192, TransportConf.from(conf(MAX_MESSAGE_SIZE_KEY, "8k")).maxMessageSize());
  }

  @Test
  void aMessageSizeThatIsNoPowerOfTwoIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TransportConf.from(conf(MAX_MESSAGE_SIZE_KEY, "12k")));
    assertTrue(e.getMessage().contains("power of two"), e.getMessage());
  }

  @Test
  void localSocketsLiveInADirectoryOfTheUserUnlessSetOrOff() {
    Configuration c = new Configuration(false);
    c.set("hadoop.tmp.dir", "${hadoop.home.dir}/data"); // a task's: unresolved
    String user = System.getProperty("user.name");
    assertEquals("/tmp/hadoop-hpc-" + user + "/sockets", TransportConf.from(c).tcpLocalDir(),
        "the default, the same in every process of the user whatever hadoop.tmp.dir is");
    assertEquals("/tmp/hadoop-hpc-" + user + "/sockets",
        TransportConf.from(new Configuration(false)).tcpLocalDir());
    c.set(TransportConfigKeys.TCP_LOCAL_DIR_KEY, "");
    assertEquals("", TransportConf.from(c).tcpLocalDir(), "empty: off");
    c.set("hadoop.tmp.dir", "/tmp/hadoop-${user.name}");
    c.set(TransportConfigKeys.TCP_LOCAL_DIR_KEY, "${hadoop.tmp.dir}/s");
    assertEquals("/tmp/hadoop-" + user + "/s", TransportConf.from(c).tcpLocalDir(),
        "a set value is expanded");
  }
}
