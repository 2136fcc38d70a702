/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One transport the service serves map outputs on: the transport, its {@link MapOutputServer}
 * (sessions live on one transport's connections and its buffers come from that transport's
 * pool) and its listener on the first free port of the NodeManager's ports. The service has one
 * (verbs or tcp) and, over verbs, a second over tcp for reducers that cannot reach it over verbs
 * ({@code mapreduce.hpc.shuffle.tcp.fallback}).
 */
final class ServingTransport {
  private static final Logger LOG = LoggerFactory.getLogger(ServingTransport.class);

  final Transport transport;
  final MapOutputServer server;
  final Listener listener;

  private ServingTransport(Transport transport, MapOutputServer server, Listener listener) {
    this.transport = transport;
    this.server = server;
    this.listener = listener;
  }

  /**
   * Opens the transport {@code transportKeys} select, and listens on the first free port of
   * the NodeManager's ports; whatever started is closed again when a step fails.
   *
   * @param refusal why the service must not serve on the transport opened (given its name; TLS
   *                rules), or null: checked before anything listens
   * @param wrap    the handler the listener serves with, given the server (tests make it sick)
   */
  static ServingTransport open(Configuration transportKeys, ShuffleConf conf, int stockPort,
      String host, JobRegistry jobs, MapOutputLocator locator, ShuffleServiceMetrics metrics,
      Function<String, String> refusal, UnaryOperator<RequestHandler> wrap) throws IOException {
    TransportConf tc = TransportConf.from(transportKeys);
    Transport transport = TransportFactory.create(transportKeys);
    MapOutputServer server = null;
    boolean ok = false;
    try {
      String refused = refusal.apply(transport.name());
      if (refused != null) {
        throw new IOException(refused);
      }
      server = new MapOutputServer(transport.bufferPool(), jobs, locator, conf, tc.ioTimeoutMs(),
          metrics, stockPort, transport.name());
      Listener listener = bind(transport, server, wrap.apply(server), conf, stockPort, host);
      ok = true;
      return new ServingTransport(transport, server, listener);
    } finally {
      if (!ok) {
        close(null, server, transport);
      }
    }
  }

  /**
   * Listens on the first free port of the NodeManager's ports. Reducers cannot be told which one
   * it is: the MapReduce AM hands them a single port per NodeManager (the one the aux service's
   * metadata names, which must stay the stock port for stock's fetcher and fallback), so they
   * try the ports in the same order. That is safe because the service proves which port it
   * listens on: {@code server} MACs it into every answer and refuses opens meant for another
   * (ShuffleAuth), so whatever holds an earlier port can neither relay nor answer for us.
   */
  private static Listener bind(Transport transport, MapOutputServer server,
      RequestHandler handler, ShuffleConf conf, int stockPort, String host) throws IOException {
    IOException last = null;
    for (int port : conf.ports(stockPort)) {
      InetSocketAddress at = new InetSocketAddress(host, port);
      server.listeningOn(port);
      try {
        return transport.listen(at, handler);
      } catch (IOException e) {
        last = e;
        LOG.debug("hpc shuffle: {} is taken over {}: {}", at, transport.name(), e.toString());
      }
    }
    BindException e = new BindException("cannot listen on " + host + " port "
        + conf.describePorts(stockPort) + " over " + transport.name() + " ("
        + (last == null ? "" : last.getMessage()) + "): stop whatever holds them or change "
        + ShuffleConfigKeys.PORT_KEY + " / " + ShuffleConfigKeys.PORT_RANGE_KEY
        + (conf.bindHost().isEmpty() ? "" : " / " + ShuffleConfigKeys.BIND_HOST_KEY));
    e.initCause(last);
    throw e;
  }

  String name() {
    return transport.name();
  }

  InetSocketAddress address() {
    return listener.address();
  }

  /** Stops listening, ends the sessions and closes the transport; logs what fails. */
  void close() {
    close(listener, server, transport);
  }

  private static void close(Listener listener, MapOutputServer server, Transport transport) {
    try {
      if (listener != null) {
        listener.close();
      }
    } catch (RuntimeException e) {
      LOG.warn("hpc shuffle: closing the listener failed", e);
    }
    try {
      if (server != null) {
        server.close();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      LOG.warn("hpc shuffle: stopping the server failed", e);
    }
    try {
      transport.close();
    } catch (IOException | RuntimeException e) {
      LOG.warn("hpc shuffle: closing the {} transport failed", transport.name(), e);
    }
  }
}
