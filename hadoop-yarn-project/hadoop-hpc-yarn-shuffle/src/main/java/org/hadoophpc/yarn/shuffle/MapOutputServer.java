/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.hadoop.metrics2.lib.MutableCounterLong;
import org.hadoophpc.mapreduce.shuffle.ShuffleAuth;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.protocol.CloseRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ProtocolException;
import org.hadoophpc.mapreduce.shuffle.protocol.ReadRequest;
import org.hadoophpc.mapreduce.shuffle.protocol.SessionLayout.ReadSpan;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.hadoophpc.mapreduce.shuffle.protocol.VersionMismatchException;
import org.hadoophpc.mapreduce.shuffle.protocol.Wire;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.FileSpan;
import org.hadoophpc.net.RequestHandler;
import org.hadoophpc.net.TransportTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves map-output partitions over the transport. Requests are decoded on the transport's event
 * thread. Where the transport sends from files ({@code mapreduce.hpc.shuffle.sendfile}, tcp),
 * reads are answered right there with {@code respondFile} (the kernel copies page cache to
 * socket; no read-ahead); otherwise opens and reads go to a bounded pool of reader threads that
 * read chunks into pool buffers (first chunks read ahead); a full queue answers BUSY. Every
 * session starts with an open request whose HMAC must match the job token the NodeManager gave
 * the service; anything else is refused and logged. Bounds before trust: {@link UntrustedPeers}
 * and the transport's hooks below (open size, deadline); after it: {@link SessionAdmission}.
 */
final class MapOutputServer implements RequestHandler {
  private static final Logger LOG = LoggerFactory.getLogger(MapOutputServer.class);
  /** Sessions one connection may hold (a reducer needs one per fetcher at a time). */
  static final int MAX_SESSIONS_PER_CONNECTION = 256;

  private final BufferPool pool;
  private final JobRegistry jobs;
  private final MapOutputLocator locator;
  private final ShuffleConf conf;
  private final long allocateTimeoutMs;
  private final ShuffleServiceMetrics metrics;
  private final ThreadPoolExecutor readers;
  /** What an open may hold: its maps, a session, the files (caps). */
  private final SessionAdmission admission;
  /** Connections whose peer has not proved a job token yet. */
  private final UntrustedPeers untrusted;
  private final Map<Long, ServedSession> sessions = new ConcurrentHashMap<>();
  private final AtomicLong prefetched = new AtomicLong();
  /** The stock shuffle port of this NodeManager: its identity towards reducers. */
  private final int stockPort;
  /** bytesServedOverVerbs or bytesServedOverTcp: the transport this server answers on. */
  private final MutableCounterLong servedOverTransport;
  /**
   * The port this server's listener holds: opens name the port the reducer connected to, and
   * the answer's MAC covers this one, so an open relayed from another port fails (ShuffleAuth).
   */
  private volatile int hpcPort;

  MapOutputServer(BufferPool pool, JobRegistry jobs, MapOutputLocator locator, ShuffleConf conf,
      long allocateTimeoutMs, ShuffleServiceMetrics metrics, int stockPort, String transport) {
    this.stockPort = stockPort;
    this.servedOverTransport = "verbs".equals(transport) ? metrics.bytesServedOverVerbs
        : metrics.bytesServedOverTcp;
    this.pool = pool;
    this.jobs = jobs;
    this.locator = locator;
    this.conf = conf;
    this.allocateTimeoutMs = allocateTimeoutMs;
    this.metrics = metrics;
    this.admission = new SessionAdmission(conf.limits(), locator, metrics);
    this.untrusted = new UntrustedPeers(conf.limits(), metrics);
    AtomicInteger n = new AtomicInteger();
    this.readers = new ThreadPoolExecutor(conf.serverThreads(), conf.serverThreads(), 60,
        TimeUnit.SECONDS, new ArrayBlockingQueue<>(conf.serverQueue()), r -> {
          Thread t = new Thread(r, "hpc-shuffle-reader-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        });
  }

  /**
   * The port the listener serving this server binds. Set before the listener is asked to bind
   * it (a listen that fails receives nothing), so no open is ever answered without it.
   */
  void listeningOn(int port) {
    this.hpcPort = port;
  }

  /** Connections start untrusted; a verified open trusts them (see {@link Connection#trust}). */
  @Override
  public boolean authenticates() {
    return true;
  }

  /**
   * Before trust a peer may send one open of the size {@code open.maps.max} maps take (8 KiB
   * for the default: on tcp it then takes no pooled memory before it arrived in full).
   */
  @Override
  public int untrustedRequestBytes() {
    return conf.limits().openBytes();
  }

  /** The largest request is an open: nothing larger is read, trusted or not. */
  @Override
  public int maxRequestBytes() {
    return conf.limits().openBytes();
  }

  @Override
  public void onConnect(Connection connection) {
    if (!connection.trusted()) {
      untrusted.connected(connection);
    }
  }

  @Override
  public void onRequest(Connection connection, Buffer request, Responder responder) {
    Runnable task;
    try {
      ByteBuffer in = request.nio();
      byte type = Wire.type(in);
      switch (type) {
        case Wire.TYPE_OPEN -> {
          OpenRequest r = OpenRequest.decode(in);
          task = () -> open(connection, r, responder);
        }
        case Wire.TYPE_READ -> {
          if (!connection.trusted()) {
            throw new ProtocolException("read before a verified open");
          }
          ReadRequest r = ReadRequest.decode(in);
          if (fromFiles(connection)) {
            // no file I/O here: the transport sends the chunk from the page cache later
            read(connection, r, responder);
            return;
          }
          task = () -> read(connection, r, responder);
        }
        case Wire.TYPE_CLOSE -> {
          closeSession(connection, CloseRequest.decode(in).session());
          respondEmpty(responder);
          return;
        }
        default -> throw new ProtocolException("unknown message type " + type);
      }
    } catch (ProtocolException e) {
      metrics.errors.incr();
      LOG.warn("hpc shuffle: malformed request from {}: {}", connection.remoteAddress(),
          e.getMessage());
      responder.fail((e instanceof VersionMismatchException ? ShuffleError.VERSION
          : ShuffleError.BAD_REQUEST).code(), e.getMessage());
      return;
    } finally {
      request.release();
    }
    try {
      readers.execute(() -> {
        try {
          task.run();
        } catch (RuntimeException e) {
          metrics.errors.incr();
          LOG.error("hpc shuffle: request from {} failed", connection.remoteAddress(), e);
          responder.fail(ShuffleError.IO.code(), String.valueOf(e));
        }
      });
    } catch (RejectedExecutionException e) {
      metrics.busyRejections.incr();
      responder.fail(ShuffleError.BUSY.code(), "read queue full ("
          + conf.serverQueue() + " requests waiting); retry later");
    }
  }

  /** Reads on this connection are answered straight from the map-output files (sendfile). */
  private boolean fromFiles(Connection connection) {
    return conf.sendfile() && connection.respondsFromFiles();
  }

  @Override
  public void onClose(Connection connection) {
    untrusted.closed(connection);
    for (ServedSession s : sessions.values()) {
      if (s.connection == connection) {
        closeSession(connection, s.id);
      }
    }
  }

  private void open(Connection connection, OpenRequest r, Responder responder) {
    if (r.servicePort() != 0 && r.servicePort() != stockPort) {
      metrics.wrongService.incr();
      responder.fail(ShuffleError.WRONG_SERVICE.code(), "this is the hpc shuffle of the"
          + " NodeManager with stock shuffle port " + stockPort + ", not " + r.servicePort());
      return;
    }
    int port = hpcPort;
    if (r.hpcPort() != port) {
      // the reducer connected to another port: something there relays its opens to us
      metrics.wrongService.incr();
      LOG.warn("hpc shuffle: refused an open from {} meant for port {}: this service listens on"
          + " {} (relayed by whatever holds port {}?)", connection.remoteAddress(), r.hpcPort(),
          port, r.hpcPort());
      responder.fail(ShuffleError.WRONG_SERVICE.code(), "this hpc shuffle listens on port "
          + port + ", not " + r.hpcPort());
      return;
    }
    JobRegistry.Job job = jobs.get(r.jobId());
    if (job == null) {
      metrics.unknownJobs.incr();
      LOG.warn("hpc shuffle: refused a fetch from {} for {}: no job token for it (the job finished,"
          + " or its application started before this NodeManager's shuffle)",
          connection.remoteAddress(), r.jobId());
      responder.fail(ShuffleError.UNKNOWN_JOB.code(), "no job token for " + r.jobId());
      return;
    }
    if (!ShuffleAuth.verifyRequest(r, job.secret())) {
      metrics.authFailures.incr();
      LOG.warn("hpc shuffle: refused a fetch from {} for {} reduce {}: {} job token HMAC",
          connection.remoteAddress(), r.jobId(), r.reduce(),
          r.hash().isEmpty() ? "missing" : "wrong");
      responder.fail(ShuffleError.AUTH.code(), "request not authenticated with the job token of "
          + r.jobId());
      return;
    }
    connection.trust(); // the peer holds a job token: it may now send more than an open
    untrusted.trusted(connection);
    long held = sessions.values().stream().filter(s -> s.connection == connection).count();
    if (held >= MAX_SESSIONS_PER_CONNECTION) {
      metrics.opensRefusedBySessionCap.incr();
      responder.fail(ShuffleError.BUSY.code(), held + " sessions already open on this"
          + " connection");
      return;
    }
    ServedSession.Entry[] entries;
    try {
      entries = admission.admit(job, r);
    } catch (SessionAdmission.Refused e) {
      responder.fail(e.code.code(), e.getMessage());
      return;
    }
    List<OpenResponse.Partition> parts = new ArrayList<>(entries.length);
    for (ServedSession.Entry e : entries) {
      parts.add(e.partition);
    }
    // the session id is derived from both nonces and never sent: only the reducer that made the
    // open can name it (a replayed open opens a session nobody can read; it ends with the
    // connection)
    long id;
    byte[] nonce;
    ServedSession s;
    do {
      nonce = ShuffleAuth.nonce();
      id = ShuffleAuth.session(r.nonce(), nonce, job.secret());
      s = new ServedSession(id, connection, job, r.reduce(), entries,
          Math.min(r.chunkSize(), pool.maxChunk()));
    } while (sessions.putIfAbsent(id, s) != null);
    metrics.sessionsOpened.incr();
    metrics.openSessions.incr();
    if (!fromFiles(connection)) {
      // only the first read: later ones come while the reducer's window of reads keeps the
      // readers busy, and reading them further ahead cost more than it saved (architecture.md)
      readAhead(s, s.first());
    }
    OpenResponse answer = new OpenResponse(stockPort, port, nonce,
        ShuffleAuth.replyHash(r, stockPort, port, nonce, job.secret()), parts);
    Buffer b = allocate(answer.encodedSize(), responder);
    if (b == null) {
      closeSession(connection, id);
      return;
    }
    answer.encode(b.nio());
    b.nio().flip();
    responder.respond(b);
  }

  /**
   * Reads {@code span} (the session's first read) into memory ahead of its request, within the
   * pre-fetch budget; a read that asks for exactly it is answered from it.
   */
  private void readAhead(ServedSession s, ReadSpan span) {
    if (span == null || span.length() > pool.maxChunk()) {
      return;
    }
    int n = span.length();
    if (prefetched.addAndGet(n) > conf.prefetchMax()) {
      prefetched.addAndGet(-n);
      noReadAhead(s, "pre-fetch budget (" + ShuffleConfigKeys.PREFETCH_MAX_KEY + ") in use");
      return;
    }
    CompletableFuture<Buffer> f = new CompletableFuture<>();
    if (!s.offerAhead(span, f)) {
      prefetched.addAndGet(-n);
      return;
    }
    metrics.prefetchBytes.set(prefetched.get());
    try {
      readers.execute(() -> {
        Buffer b = pool.allocate(n);
        if (b == null) {
          noReadAhead(s, "no " + n + "-byte buffer in the transport's pool");
        } else {
          try {
            readPieces(s.pieces(span), b);
          } catch (IOException | RuntimeException x) {
            b.release();
            b = null; // the read itself will report the error
            noReadAhead(s, x.toString());
          }
        }
        f.complete(b);
      });
    } catch (RejectedExecutionException x) {
      noReadAhead(s, "read queue full");
      f.complete(null);
    }
  }

  /** Why a session's first read is not read ahead (its read then copies when it comes). */
  private static void noReadAhead(ServedSession s, String why) {
    LOG.debug("hpc shuffle: session {} of reduce {}: no read-ahead: {}", s.id, s.reduce, why);
  }

  private void read(Connection connection, ReadRequest r, Responder responder) {
    long start = System.nanoTime();
    ServedSession s = sessions.get(r.session());
    if (s == null || s.connection != connection) {
      responder.fail(ShuffleError.NO_SESSION.code(), "no session " + r.session()
          + " on this connection (closed, or its job finished)");
      return;
    }
    if (!s.layout.served(r.map())) {
      metrics.errors.incr();
      responder.fail(ShuffleError.BAD_REQUEST.code(), "map #" + r.map() + " is not served in"
          + " this session");
      return;
    }
    if (s.layout.position(r.map(), r.offset(), r.length()) < 0) {
      metrics.errors.incr();
      responder.fail(ShuffleError.BAD_REQUEST.code(), "read of " + r.length() + " bytes at "
          + r.offset() + " of map #" + r.map() + " (a partition of " + s.layout.length(r.map())
          + " bytes) is outside the session's " + s.layout.total() + " bytes");
      return;
    }
    ReadSpan span = new ReadSpan(r.map(), r.offset(), r.length());
    List<ServedSession.Piece> pieces = s.pieces(span);
    if (fromFiles(connection)) {
      respondFromFiles(pieces, r.length(), responder, start);
      return;
    }
    CompletableFuture<Buffer> ahead = s.takeAhead(span);
    if (ahead == null) {
      copyNow(pieces, r.length(), responder, start);
      return;
    }
    ahead.whenComplete((b, x) -> {
      headDone(r.length());
      if (b != null) {
        metrics.prefetchHits.incr();
        served(b.readableBytes(), start);
        responder.respond(b);
      } else {
        copyNow(pieces, r.length(), responder, start);
      }
    });
  }

  /** A read-ahead of {@code length} bytes was consumed or dropped: budget back. */
  private void headDone(int length) {
    metrics.prefetchBytes.set(prefetched.addAndGet(-length));
  }

  /** Answers with the pieces' bytes sent from their files by the transport (sendfile). */
  private void respondFromFiles(List<ServedSession.Piece> pieces, int length,
      Responder responder, long start) {
    // counted first: the reducer may hold the answer before the call below returns
    served(length, start);
    boolean sent;
    if (pieces.size() == 1) {
      ServedSession.Piece p = pieces.get(0);
      sent = responder.respondFile(p.entry().channel, p.filePosition(), p.length());
    } else {
      List<FileSpan> spans = new ArrayList<>(pieces.size());
      for (ServedSession.Piece p : pieces) {
        spans.add(new FileSpan(p.entry().channel, p.filePosition(), p.length()));
      }
      sent = responder.respondFiles(spans);
    }
    if (!sent) {
      // cannot happen: this connection said it sends from files (fromFiles)
      responder.fail(ShuffleError.IO.code(), "the transport did not take a file answer");
    }
  }

  /** Answers with the pieces' bytes read into a pool buffer. */
  private void copyNow(List<ServedSession.Piece> pieces, int length, Responder responder,
      long start) {
    Buffer b = allocate(length, responder);
    if (b == null) {
      return;
    }
    try {
      readPieces(pieces, b);
    } catch (IOException x) {
      b.release();
      metrics.errors.incr();
      LOG.warn("hpc shuffle: reading a map output failed: {}", x.toString());
      responder.fail(ShuffleError.IO.code(), x.getMessage());
      return;
    }
    served(b.readableBytes(), start);
    responder.respond(b);
  }

  /** A read is answered ({@code bytes} handed to the transport) {@code start} after it came. */
  private void served(int bytes, long start) {
    metrics.readRequests.incr();
    metrics.bytesServed.incr(bytes);
    servedOverTransport.incr(bytes);
    metrics.readAnswerMicros.add((System.nanoTime() - start) / 1000);
  }

  /**
   * Fills {@code b} (position 0, limit = bytes wanted) with the pieces' bytes, in order, and
   * flips it. When a piece after the first cannot be read, {@code b} ends where that piece's
   * partition starts (an answer may end early at a partition boundary, see {@code ReadRequest}):
   * the reducer asks again from there, and that read fails on its own, for that map.
   *
   * @throws IOException when the first piece cannot be read
   */
  private void readPieces(List<ServedSession.Piece> pieces, Buffer b) throws IOException {
    ByteBuffer dst = b.nio();
    for (int k = 0; k < pieces.size(); k++) {
      int mark = dst.position();
      try {
        readPiece(pieces.get(k), dst);
      } catch (IOException e) {
        if (k == 0) {
          throw e;
        }
        metrics.errors.incr();
        LOG.warn("hpc shuffle: a read ends before the partition it cannot read: {}",
            e.toString());
        dst.position(mark);
        dst.flip();
        return;
      }
    }
    if (dst.hasRemaining()) {
      throw new IllegalStateException(dst.remaining() + " bytes of the answer not read");
    }
    dst.flip();
  }

  private static void readPiece(ServedSession.Piece p, ByteBuffer dst) throws IOException {
    long pos = p.filePosition();
    long end = pos + p.length();
    while (pos < end) {
      int limit = dst.limit();
      dst.limit(dst.position() + (int) (end - pos));
      int n;
      try {
        n = p.entry().channel.read(dst, pos);
      } finally {
        dst.limit(limit);
      }
      if (n < 0) {
        throw new IOException("map output file ends at byte " + pos + ", before the "
            + (p.entry().index.startOffset + p.entry().index.partLength)
            + " its index promises");
      }
      pos += n;
    }
  }

  private Buffer allocate(int size, Responder responder) {
    try {
      return pool.allocate(size, allocateTimeoutMs);
    } catch (TransportTimeoutException e) {
      metrics.busyRejections.incr();
      responder.fail(ShuffleError.BUSY.code(), e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      responder.fail(ShuffleError.IO.code(), "service shutting down");
    }
    return null;
  }

  private void respondEmpty(Responder responder) {
    Buffer b = pool.allocate(1);
    if (b == null) {
      responder.fail(ShuffleError.BUSY.code(), "transport memory exhausted");
      return;
    }
    b.nio().limit(0);
    responder.respond(b);
  }

  private void closeSession(Connection connection, long id) {
    ServedSession s = sessions.get(id);
    if (s == null || s.connection != connection || !sessions.remove(id, s)) {
      return;
    }
    metrics.openSessions.decr();
    s.close(this::headDone);
    admission.closed(s);
  }

  /** Ends every session of {@code jobId} (its application finished). */
  void closeJob(String jobId) {
    for (ServedSession s : sessions.values()) {
      if (s.job.jobId().equals(jobId)) {
        closeSession(s.connection, s.id);
      }
    }
  }

  int openSessions() {
    return sessions.size();
  }

  long prefetchedBytes() {
    return prefetched.get();
  }

  /** Closes all sessions and stops the reader threads. */
  void close() throws InterruptedException {
    for (ServedSession s : sessions.values()) {
      closeSession(s.connection, s.id);
    }
    readers.shutdownNow();
    readers.awaitTermination(10, TimeUnit.SECONDS);
  }
}
