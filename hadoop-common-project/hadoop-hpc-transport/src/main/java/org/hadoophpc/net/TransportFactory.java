/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.nativeio.RdmaDevices;
import org.hadoophpc.net.tcp.TcpTransport;
import org.hadoophpc.net.verbs.VerbsTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the transport the configuration asks for: verbs where an RDMA device is usable, tcp
 * otherwise. A fallback from verbs to tcp is logged once per reason and process (WARN when
 * verbs was asked for, INFO under {@code auto}); with
 * {@code hadoop.hpc.transport.open.fails.without.verbs=true} it is an error carrying the same
 * reason. Thread-safe.
 */
public final class TransportFactory {
  private static final Logger LOG = LoggerFactory.getLogger(TransportFactory.class);
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  private TransportFactory() {
  }

  /** The transport for {@code conf}; see the class comment for the choice. */
  public static Transport create(Configuration conf) throws IOException {
    return create(TransportConf.from(conf), RdmaDevices::probe);
  }

  /** As {@link #create(Configuration)}, with the device probe given (tests). */
  public static Transport create(TransportConf conf, Supplier<RdmaDevices> probe)
      throws IOException {
    TransportSelector.Selection s = TransportSelector.select(conf, probe);
    String reason = s.reason();
    if (s.verbs()) {
      try {
        Transport t = VerbsTransport.open(conf, s.device(), s.port());
        logOnce(false, "using verbs transport on " + s.device().name() + " port " + s.port());
        return t;
      } catch (IOException e) {
        reason = "verbs transport on " + s.device().name() + " port " + s.port()
            + " failed to open: " + e.getMessage();
        if (conf.kind() == TransportConf.Kind.VERBS && conf.openFailsWithoutVerbs()) {
          throw new TransportException("verbs transport required ("
              + TransportConfigKeys.OPEN_FAILS_WITHOUT_VERBS_KEY + "=true) but " + reason, e);
        }
      }
    }
    if (!reason.isEmpty()) {
      logOnce(conf.kind() == TransportConf.Kind.VERBS, "using tcp transport: " + reason);
    }
    return new TcpTransport(conf);
  }

  private static void logOnce(boolean warn, String message) {
    if (LOGGED.add(message)) {
      if (warn) {
        LOG.warn(message);
      } else {
        LOG.info(message);
      }
    }
  }
}
