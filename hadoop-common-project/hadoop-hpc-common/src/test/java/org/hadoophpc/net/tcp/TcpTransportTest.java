/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConformanceTest;

/** The transport contract over the tcp transport on loopback. */
class TcpTransportTest extends TransportConformanceTest {
  @Override
  protected Transport newTransport(Configuration conf) throws Exception {
    return new TcpTransport(TransportConf.from(conf));
  }
}
