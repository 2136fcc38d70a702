/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;

import javax.net.SocketFactory;

import org.apache.hadoop.conf.Configurable;
import org.apache.hadoop.conf.Configuration;

/**
 * HDFS clients' (and DataNode mirrors') sockets to DataNodes' transfer ports, over the hpc
 * transport where the DataNode serves it, else over TCP, decided per connection (and for the
 * whole process by the rule of {@link TransferUse}: stock TCP on a node without RDMA). Clients turn
 * it on with {@code hadoop.rpc.socket.factory.class.ClientProtocol}: in Hadoop 3.5 DFSClient
 * uses that factory only for DataTransfer sockets (its RPC uses the default factory), so Hadoop
 * RPC never comes here. Equal to every other instance, as IPC's client cache expects of
 * factories.
 */
public class RdmaSocketFactory extends SocketFactory implements Configurable {
  private Configuration conf;
  private TransferClient client;

  /** For Hadoop's reflection; {@link #setConf} follows. */
  public RdmaSocketFactory() {
  }

  RdmaSocketFactory(TransferClient client) {
    this.client = client;
  }

  @Override
  public void setConf(Configuration conf) {
    this.conf = conf;
    this.client = TransferUse.client(conf);
  }

  @Override
  public Configuration getConf() {
    return conf;
  }

  private synchronized TransferClient client() {
    if (client == null || client.retired()) { // retired: its settings' transport was closed
      client = TransferUse.client(conf != null ? conf : new Configuration());
    }
    return client;
  }

  @Override
  public Socket createSocket() throws IOException {
    return new TransferSocket(client());
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    Socket s = createSocket();
    s.connect(new InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort)
      throws IOException {
    Socket s = createSocket();
    s.bind(new InetSocketAddress(localHost, localPort));
    s.connect(new InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    Socket s = createSocket();
    s.connect(new InetSocketAddress(host, port));
    return s;
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress,
      int localPort) throws IOException {
    Socket s = createSocket();
    s.bind(new InetSocketAddress(localAddress, localPort));
    s.connect(new InetSocketAddress(address, port));
    return s;
  }

  @Override
  public boolean equals(Object o) {
    return o != null && o.getClass() == getClass();
  }

  @Override
  public int hashCode() {
    return getClass().hashCode();
  }
}
