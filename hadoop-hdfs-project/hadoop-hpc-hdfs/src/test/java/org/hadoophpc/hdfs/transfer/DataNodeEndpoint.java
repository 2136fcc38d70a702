/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportFactory;

/**
 * A DataNode's transport endpoint without a DataNode, for tests: a transport, the
 * {@link TransferHandler} on a listener at 127.0.0.1 (any free port) and the
 * {@link TransferPeerServer} its streams arrive at, with the handler's timer. Closed in the
 * reverse order of creation.
 */
final class DataNodeEndpoint implements AutoCloseable {
  final Transport transport;
  final TransferPeerServer peers;
  final TransferHandler handler;
  private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
  private Listener listener;

  DataNodeEndpoint(Configuration conf, TransferMetrics metrics) throws IOException {
    transport = TransportFactory.create(conf);
    peers = new TransferPeerServer(4, metrics.name());
    handler = new TransferHandler(transport.bufferPool(), TransferConf.from(conf), metrics, peers,
        new InetSocketAddress("127.0.0.1", 1), timer);
    listener = transport.listen(new InetSocketAddress("127.0.0.1", 0), handler);
  }

  /** Where clients reach the endpoint. */
  InetSocketAddress address() {
    return listener.address();
  }

  /** Stops listening (the DataNode is down); {@link #listenAgain} brings it back. */
  void stopListening() throws IOException {
    listener.close();
  }

  /** Listens again at {@code at}, as a DataNode restarted on the same port. */
  void listenAgain(InetSocketAddress at) throws IOException {
    listener = transport.listen(at, handler);
  }

  @Override
  public void close() throws IOException {
    listener.close();
    handler.closeAll();
    timer.shutdownNow();
    transport.close();
  }
}
