/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.TransportConfigKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transport contract, and every tcp-specific test, over same-host Unix domain sockets
 * ({@code hadoop.hpc.transport.tcp.local.dir} set): each test's connections must have gone by
 * the local socket, not by TCP.
 */
class TcpLocalSocketTest extends TcpTransportTest {
  @TempDir
  Path tmp;

  @Override
  protected Configuration baseConf() {
    Configuration c = super.baseConf();
    c.set(TransportConfigKeys.TCP_LOCAL_DIR_KEY, tmp.resolve("sockets").toString());
    return c;
  }

  @AfterEach
  void everyConnectionWasLocal() {
    if (client == null || listener == null) {
      return;
    }
    assertTrue(client.metrics().localConnections() > 0,
        "no connection went by the local socket");
    assertEquals(client.metrics().connectionsOpened(), client.metrics().localConnections(),
        "a client connection went by TCP");
  }
}
