/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.Closeable;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

import javax.crypto.SecretKey;

import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;

/**
 * The reducer's side of the hpc shuffle protocol: one connection per map host, kept for the
 * task's life; {@link #open} authenticates a fetch and returns its {@link FetchSession}.
 *
 * <p>Finding the service: hosts are named {@code host:stockShufflePort} by the MapReduce AM,
 * which knows nothing of our port; the service listens on a fixed port, or on the first free
 * one of {@code mapreduce.hpc.shuffle.port.range} ports when several NodeManagers share a host.
 * With a range, each port is asked for the maps in turn and the one holding them is remembered.
 *
 * <p>Thread-safe: fetcher threads share it, each working on its own host.
 */
public final class ShuffleFetchClient implements Closeable {
  private final Transport transport;
  private final TransportConf transportConf;
  private final ShuffleConf conf;
  private final SecretKey key;
  private final int chunkSize;
  private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();

  private record Endpoint(Connection connection, int port) {
  }

  public ShuffleFetchClient(Transport transport, TransportConf transportConf, ShuffleConf conf,
      SecretKey key) {
    this.transport = transport;
    this.transportConf = transportConf;
    this.conf = conf;
    this.key = key;
    // a read answer is the chunk itself; leave the transport room for nothing else
    this.chunkSize = conf.chunkSize(transportConf.maxMessageSize());
  }

  public String transportName() {
    return transport.name();
  }

  BufferPool pool() {
    return transport.bufferPool();
  }

  ShuffleConf conf() {
    return conf;
  }

  int chunkSize() {
    return chunkSize;
  }

  /** Bound on any one wait: the transport's io timeout fails operations first. */
  long waitMs() {
    return transportConf.ioTimeoutMs() + transportConf.connectTimeoutMs();
  }

  /**
   * Opens a fetch of partition {@code reduce} of {@code maps} at {@code host} ("name" or
   * "name:stockPort").
   *
   * @throws ServiceUnreachableException no service accepted a connection on any port
   * @throws ShuffleServiceException     the service refused (unknown job, bad token, busy)
   */
  public FetchSession open(String host, String jobId, int reduce, List<String> maps)
      throws IOException {
    String hash = ShuffleAuth.requestHash(jobId, reduce, maps, key);
    OpenRequest request = new OpenRequest(jobId, reduce, chunkSize, maps, hash);
    Endpoint known = endpoints.get(host);
    if (known != null) {
      if (known.connection().isOpen()) {
        try {
          return new FetchSession(this, known.connection(), send(known, request), known.port());
        } catch (ShuffleServiceException e) {
          throw e;
        } catch (IOException e) {
          forget(host); // connection broke: find the service again
        }
      } else {
        forget(host);
      }
    }
    String name = hostName(host);
    IOException last = null;
    boolean anyConnected = false;
    for (int i = 0; i < conf.portRange(); i++) {
      int port = conf.port() + i;
      Connection c;
      try {
        c = Futures.await(transport.connect(new InetSocketAddress(name, port)), waitMs(),
            "connect to " + name + ":" + port);
      } catch (IOException e) {
        last = e;
        continue;
      }
      anyConnected = true;
      Endpoint ep = new Endpoint(c, port);
      OpenResponse r;
      try {
        r = send(ep, request);
      } catch (ShuffleServiceException e) {
        c.close();
        if (conf.portRange() > 1 && e.code() == ShuffleError.UNKNOWN_JOB) {
          last = e; // another NodeManager on this host; try the next port
          continue;
        }
        throw e;
      }
      boolean holdsAny = r.partitions().stream()
          .anyMatch(p -> p.status() == OpenResponse.Status.OK);
      if (holdsAny || i == conf.portRange() - 1) {
        Endpoint prev = endpoints.put(host, ep);
        if (prev != null) {
          prev.connection().close();
        }
        return new FetchSession(this, c, r, port);
      }
      c.close(); // not the NodeManager that ran these maps
      last = new IOException(name + ":" + port + " holds none of the requested map outputs");
    }
    if (!anyConnected) {
      throw new ServiceUnreachableException("no hpc shuffle service answers at " + name
          + " port " + portList() + " over " + transport.name() + ": "
          + (last == null ? "" : last.getMessage()), last);
    }
    throw last;
  }

  private OpenResponse send(Endpoint ep, OpenRequest request) throws IOException {
    Buffer req = pool().allocate(request.encodedSize());
    if (req == null) {
      throw new IOException("transport memory exhausted: cannot send an open request");
    }
    request.encode(req.nio());
    req.nio().flip();
    CompletableFuture<Buffer> f = ep.connection().request(req);
    if (f == null) {
      req.release();
      throw new IOException("connection to " + ep.connection().remoteAddress()
          + " is at its in-flight limit");
    }
    Buffer answer = Futures.await(f, waitMs(), "open at " + ep.connection().remoteAddress());
    OpenResponse r;
    try {
      r = OpenResponse.decode(answer.nio());
    } finally {
      answer.release();
    }
    if (!ShuffleAuth.verifyReply(r.replyHash(), request.hash(), key)) {
      throw new IOException("the shuffle service at " + ep.connection().remoteAddress()
          + " did not prove it holds the job token (reply hash mismatch)");
    }
    if (r.partitions().size() != request.maps().size()) {
      throw new IOException("the shuffle service answered " + r.partitions().size()
          + " partitions for " + request.maps().size() + " maps");
    }
    return r;
  }

  private String portList() {
    return conf.portRange() == 1 ? Integer.toString(conf.port())
        : conf.port() + "-" + (conf.port() + conf.portRange() - 1);
  }

  /** Drops the connection to {@code host} (after a failure mid-fetch). */
  public void forget(String host) {
    Endpoint e = endpoints.remove(host);
    if (e != null) {
      e.connection().close();
    }
  }

  static String hostName(String host) {
    int colon = host.lastIndexOf(':');
    return colon > 0 && host.indexOf(':') == colon ? host.substring(0, colon) : host;
  }

  /** Closes the connections (the transport stays open; its owner closes it). */
  @Override
  public void close() {
    for (String h : endpoints.keySet()) {
      forget(h);
    }
  }
}
