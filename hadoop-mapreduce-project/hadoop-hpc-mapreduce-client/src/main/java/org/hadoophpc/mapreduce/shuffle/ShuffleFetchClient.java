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
import java.util.function.Consumer;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import javax.crypto.SecretKey;

import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The reducer's side of the hpc shuffle protocol: one connection per map host, kept for the
 * task's life; {@link #open} authenticates a fetch and returns its {@link FetchSession}.
 *
 * <p>Finding the service: hosts are named {@code host:stockShufflePort} by the MapReduce AM,
 * which knows nothing of our port. A service listens on the first free one of its ports
 * ({@link ShuffleConf#ports}: by default the stock port + 1, + 2, ...), and the client tries them
 * in the same order; every open names the stock port it means, so the first service that
 * accepts it is the one beside the map outputs, and it is remembered for the host.
 *
 * <p>Probing is harmless because the service proves who it is (the MapReduce AM hands a reducer
 * one port per NodeManager, the stock one, and stock's fetcher needs it, so the exact hpc port
 * cannot reach us): every open carries a fresh nonce and the port connected to, and the
 * answer's MAC covers both nonces, the service's stock and hpc ports and the request
 * ({@link ShuffleAuth}). Whatever holds an earlier port of the range without the job token
 * cannot answer, cannot relay to the real service (which MACs its own port) and cannot replay
 * an answer it saw; its answer fails verification and the next port is tried.
 *
 * <p>A host whose service cannot be reached over the transport (verbs) is tried over tcp, when
 * the client was given a way to open a tcp transport ({@link #withTcpFallback}): the service
 * listens over both ({@code mapreduce.hpc.shuffle.tcp.fallback}), and the host stays on the
 * hpc path instead of sending the reducer to stock's shuffle. Such a host is remembered with
 * its tcp connection until a fetch from it fails; then verbs is tried first again.
 *
 * <p>Thread-safe: fetcher threads share it, each working on its own host.
 */
public final class ShuffleFetchClient implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(ShuffleFetchClient.class);
  private final Transport transport;
  private final TransportConf transportConf;
  private final ShuffleConf conf;
  private final SecretKey key;
  private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
  /** BUSY answers in a row per host (fetchers share hosts over time). */
  private final Map<String, Integer> busyAnswers = new ConcurrentHashMap<>();
  /** Stock's {@code mapreduce.shuffle.port} default, for hosts named without a port. */
  static final int DEFAULT_STOCK_PORT = 13562;

  /** A service found: its connection, port, and the transport of the connection. */
  private record Endpoint(Connection connection, int port, Transport transport,
      boolean callerReads) {
  }

  /** Opens the tcp transport for hosts unreachable over {@link #transport}; null: none. */
  private Supplier<Transport> tcpOpener;
  /** Told the name of every host fetched over tcp because the transport could not reach it. */
  private Consumer<String> onHostOverTcp = h -> { };
  /** Opened by {@link #tcpOpener} at the first host that needs it; closed with the client. */
  private Transport tcp;
  private boolean tcpTried;

  public ShuffleFetchClient(Transport transport, TransportConf transportConf, ShuffleConf conf,
      SecretKey key) {
    this.transport = transport;
    this.transportConf = transportConf;
    this.conf = conf;
    this.key = key;
  }

  public String transportName() {
    return transport.name();
  }

  /**
   * Lets hosts the transport cannot reach be fetched from over tcp: {@code opener} opens a tcp
   * transport (once, at the first such host; null or a throw: no fallback), {@code onHost} hears
   * of every host fetched from that way. The tcp transport is closed with this client.
   */
  public ShuffleFetchClient withTcpFallback(Supplier<Transport> opener, Consumer<String> onHost) {
    this.tcpOpener = opener;
    this.onHostOverTcp = onHost;
    return this;
  }

  private synchronized Transport tcp() {
    if (!tcpTried && tcpOpener != null) {
      tcpTried = true;
      try {
        tcp = tcpOpener.get();
      } catch (RuntimeException e) {
        tcp = null;
      }
    }
    return tcp;
  }

  ShuffleConf conf() {
    return conf;
  }

  /**
   * Bytes per read request over {@code transportName} (see {@link ShuffleConf#chunkSize}); a
   * read answer is the chunk itself, so the transport's message size is its bound.
   */
  int chunkSize(String transportName) {
    return conf.chunkSize(transportName, transportConf.maxMessageSize());
  }

  /** Bound on any one wait: the transport's io timeout fails operations first. */
  long waitMs() {
    return transportConf.ioTimeoutMs() + transportConf.connectTimeoutMs();
  }

  /**
   * Opens a fetch of partition {@code reduce} of {@code maps} at {@code host} ("name:stockPort",
   * as the MapReduce AM names map hosts, or "name"). Only the service of the NodeManager whose
   * stock shuffle listens on {@code stockPort} is used: the request names that port, another
   * NodeManager's service answers {@link ShuffleError#WRONG_SERVICE} and the client goes on to
   * the next port; an answer naming another port is not trusted either.
   *
   * @throws ServiceUnreachableException no service of that NodeManager answers on any port
   * @throws ShuffleServiceException     that NodeManager's service refused (unknown job, bad
   *                                     token, busy)
   */
  public FetchSession open(String host, String jobId, int reduce, List<String> maps)
      throws IOException {
    int stockPort = stockPort(host);
    // an open names the chunk its session reads with, over the transport it goes by (the
    // service may read that much of each partition ahead), and the port it goes to; each has
    // a fresh nonce
    BiFunction<Transport, Integer, OpenRequest> openOver = (t, port) -> ShuffleAuth.open(
        stockPort, port, jobId, reduce, chunkSize(t.name()), maps, key);
    Endpoint known = endpoints.get(host);
    if (known != null) {
      if (known.connection().isOpen()) {
        try {
          OpenRequest request = openOver.apply(known.transport(), known.port());
          OpenResponse r = send(known, request);
          return new FetchSession(this, known.connection(), r, session(request, r),
              known.port(), known.transport().name(), known.transport().bufferPool(),
              known.callerReads());
        } catch (ShuffleServiceException e) {
          if (e.code() != ShuffleError.WRONG_SERVICE) {
            throw e;
          }
          forget(host);
        } catch (IOException e) {
          forget(host); // connection broke: find the service again
        }
      } else {
        forget(host);
      }
    }
    try {
      return probe(transport, host, stockPort, openOver);
    } catch (ServiceUnreachableException e) {
      Transport t = "tcp".equals(transport.name()) ? null : tcp();
      if (t == null) {
        throw e;
      }
      FetchSession s;
      try {
        s = probe(t, host, stockPort, openOver);
      } catch (ServiceUnreachableException overTcp) {
        throw new ServiceUnreachableException(e.getMessage() + "; nor over tcp: "
            + overTcp.getMessage(), e);
      }
      onHostOverTcp.accept(host);
      return s;
    }
  }

  /**
   * Finds the service of the NodeManager at {@code host} over {@code transport} by trying its
   * ports in order, and opens the fetch there.
   */
  private FetchSession probe(Transport transport, String host, int stockPort,
      BiFunction<Transport, Integer, OpenRequest> openOver) throws IOException {
    String name = hostName(host);
    int[] ports = conf.ports(stockPort == 0 ? DEFAULT_STOCK_PORT : stockPort);
    IOException last = null;
    int others = 0;
    for (int port : ports) {
      Connection c;
      try {
        c = Futures.await(transport.connect(new InetSocketAddress(name, port)), waitMs(),
            "connect to " + name + ":" + port);
      } catch (IOException e) {
        last = e;
        continue;
      }
      // the fetcher reads its connection itself (tcp): an answer wakes one thread, not the
      // transport's and then the fetcher, and is copied out while it is in this core's cache
      Endpoint ep = new Endpoint(c, port, transport, conf.callerReads() && c.leaveReadsToCallers());
      OpenRequest request = openOver.apply(transport, port);
      OpenResponse r;
      try {
        r = send(ep, request);
      } catch (ShuffleServiceException e) {
        if (e.code() == ShuffleError.WRONG_SERVICE) {
          c.close(); // another NodeManager's service on this host: try the next port
          others++;
          last = e;
          continue;
        }
        remember(host, ep); // the right service; it refused this request only
        throw e;
      } catch (IOException e) {
        // not our protocol, it does not answer, or it did not prove it is the service on this
        // port (no job token: a squatter; another port's MAC: a relay): try the next port
        if (e instanceof ServiceAuthenticationException) {
          LOG.warn("hpc shuffle: {}; trying the next port", e.getMessage());
        }
        c.close();
        last = e;
        continue;
      }
      remember(host, ep);
      return new FetchSession(this, c, r, session(request, r), port, transport.name(),
          transport.bufferPool(), ep.callerReads());
    }
    throw new ServiceUnreachableException("no hpc shuffle service of the NodeManager at " + host
        + " answers at " + name + " port " + conf.describePorts(stockPort == 0
            ? DEFAULT_STOCK_PORT : stockPort) + " over " + transport.name()
        + (others > 0 ? " (" + others + " belong to other NodeManagers)" : "")
        + (last == null ? "" : ": " + last.getMessage()), last);
  }

  private void remember(String host, Endpoint ep) {
    Endpoint prev = endpoints.put(host, ep);
    if (prev != null && prev.connection() != ep.connection()) {
      prev.connection().close();
    }
  }

  private OpenResponse send(Endpoint ep, OpenRequest request) throws IOException {
    Buffer req = ep.transport().bufferPool().allocate(request.encodedSize());
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
    Buffer answer = Futures.await(ep.callerReads() ? ep.connection() : null, f, waitMs(),
        "open at " + ep.connection().remoteAddress());
    OpenResponse r;
    try {
      r = OpenResponse.decode(answer.nio());
    } finally {
      answer.release();
    }
    if (request.servicePort() != 0 && r.servicePort() != request.servicePort()) {
      throw new ShuffleServiceException(ShuffleError.WRONG_SERVICE, "the service at "
          + ep.connection().remoteAddress() + " belongs to the NodeManager with stock shuffle"
          + " port " + r.servicePort() + ", not " + request.servicePort(), null);
    }
    if (r.hpcPort() != request.hpcPort()) {
      throw new ServiceAuthenticationException("the shuffle service reached at "
          + ep.connection().remoteAddress() + " answers for port " + r.hpcPort() + ", not "
          + request.hpcPort() + ": the open was relayed");
    }
    if (!ShuffleAuth.verifyReply(r, request, key)) {
      throw new ServiceAuthenticationException("the shuffle service at "
          + ep.connection().remoteAddress() + " did not prove it holds the job token and"
          + " answers this open on this port (reply MAC mismatch)");
    }
    if (r.partitions().size() != request.maps().size()) {
      throw new IOException("the shuffle service answered " + r.partitions().size()
          + " partitions for " + request.maps().size() + " maps");
    }
    return r;
  }

  /** The id of the session a verified open opened (never on the wire). */
  private long session(OpenRequest request, OpenResponse response) {
    return ShuffleAuth.session(request.nonce(), response.nonce(), key);
  }

  /**
   * Counts one more BUSY answer in a row from {@code host}'s service; returns how many there
   * have been.
   */
  int busy(String host) {
    return busyAnswers.merge(host, 1, Integer::sum);
  }

  /** {@code host}'s service answered other than BUSY: the count starts again. */
  void notBusy(String host) {
    busyAnswers.remove(host);
  }

  /** The stock shuffle port in a map host's name ("name:port"), or 0. */
  static int stockPort(String host) {
    int colon = host.lastIndexOf(':');
    if (colon <= 0 || host.indexOf(':') != colon) {
      return 0;
    }
    try {
      int p = Integer.parseInt(host.substring(colon + 1));
      return p > 0 && p <= 65535 ? p : 0;
    } catch (NumberFormatException e) {
      return 0;
    }
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

  /**
   * Closes the connections and the tcp transport of the fallback, if one was opened (the
   * transport stays open; its owner closes it).
   */
  @Override
  public void close() {
    for (String h : endpoints.keySet()) {
      forget(h);
    }
    Transport t;
    synchronized (this) {
      t = tcp;
      tcp = null;
      tcpTried = true;
    }
    if (t != null) {
      try {
        t.close();
      } catch (IOException e) {
        // closing: nothing left to fetch with it
      }
    }
  }
}
