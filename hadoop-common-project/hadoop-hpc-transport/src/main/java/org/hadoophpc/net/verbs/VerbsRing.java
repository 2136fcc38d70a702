/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportException;

/**
 * One rule: a connection's receive ring is pool memory, taken whole when the queue pair is set
 * up and given back once, after the queue pair is destroyed. Also the ring's sizing.
 *
 * <p>The ring is all {@link VerbsTransport#EAGER_SIZE}-byte chunks of the transport's pool (so
 * registered memory stays within {@code buffer.pool.max}): header chunks holding
 * {@link #HEADERS_PER_CHUNK} header slots each (receive slots first, then send slots), and one
 * eager payload chunk per receive slot.
 *
 * <p>Ownership: the connection takes every chunk when the queue pair is set up and holds it,
 * posted or not, until {@link #finish} releases it, once, after the queue pair is destroyed.
 * A receive's payload is copied out into a buffer of its own on delivery; the chunk is never
 * handed to anyone, so re-posting a slot needs nothing back from users and a chunk cannot be
 * released twice or while the HCA may still write it.
 *
 * <p>Belongs to the transport's event loop, as its connection does.
 */
final class VerbsRing {
  static final int HEADERS_PER_CHUNK = VerbsTransport.EAGER_SIZE / VerbsHeader.BYTES;
  /** The receive depth a connection gets at most. */
  private static final int MAX_RECV_DEPTH = 32;
  /**
   * The fewest receives a connection gets. Credits come back on the peer's messages, or in a
   * CREDIT message once half the window ({@link VerbsCredits#threshold}, at least 2) is
   * owed; a CREDIT takes a receive and so is owed back itself. With fewer than 4 receives half
   * the window is 1: every CREDIT would answer a CREDIT, two idle peers would bounce them
   * forever, and a side holding one credit would keep spending it on a CREDIT instead of its
   * data (seen as a request that never left, with 2 receives).
   */
  static final int MIN_RECV_DEPTH = 4;

  private final VerbsTransport transport;
  /** Chosen when the queue pair is set up; 0 before. */
  private int depth;
  private Buffer[] headerChunks;
  private ByteBuffer[] headerViews;
  private VerbsTransport.MrInfo[] headerMrs;
  private final Buffer[] recvChunks;
  private final ByteBuffer[] recvViews;
  private final VerbsTransport.MrInfo[] recvMrs;
  /** Ring bytes reserved from the transport's budget (returned in {@link #finish}). */
  private long reserved;
  private final boolean[] posted;
  /** Receives posted and not completed yet. */
  private int postedCount;
  /** Receive slots whose message waits for pool memory before it can be delivered. */
  private final ArrayDeque<Integer> held = new ArrayDeque<>();

  /** A ring of at most {@code maxRecv} receives; nothing is taken yet. */
  VerbsRing(VerbsTransport transport, int maxRecv) {
    this.transport = transport;
    this.posted = new boolean[maxRecv];
    this.recvChunks = new Buffer[maxRecv];
    this.recvViews = new ByteBuffer[maxRecv];
    this.recvMrs = new VerbsTransport.MrInfo[maxRecv];
  }

  // ======================================================================================
  // Sizing
  // ======================================================================================

  /** The receive depth a transport configured by {@code conf} gives its connections. */
  static int wantedDepth(TransportConf conf) {
    return Math.max(4, Math.min(conf.maxInflight(), MAX_RECV_DEPTH));
  }

  /**
   * Send queue depth of a connection: requests and one-sided ops (max.inflight), answers and
   * acks to the peer's operations (its window, at most our receive depth), rendezvous reads,
   * and credit messages.
   */
  static int sendDepth(int maxInflight, int recvDepth) {
    return 2 * maxInflight + 2 * recvDepth + 8;
  }

  /** Pool chunks holding a connection's header slots (receive, then send). */
  static int headerChunks(int maxInflight, int recvDepth) {
    int headers = recvDepth + sendDepth(maxInflight, recvDepth);
    return (headers + HEADERS_PER_CHUNK - 1) / HEADERS_PER_CHUNK;
  }

  /** Pool bytes of a connection's receive ring: header chunks and a payload per receive. */
  static long ringBytes(int maxInflight, int recvDepth) {
    return (long) (headerChunks(maxInflight, recvDepth) + recvDepth) * VerbsTransport.EAGER_SIZE;
  }

  /**
   * Fails unless the rings' quarter of the pool holds at least one ring of
   * {@value #MIN_RECV_DEPTH} receives: a configuration error, named, not a fallback to tcp.
   */
  static void checkPoolHoldsARing(TransportConf conf) {
    long smallest = ringBytes(conf.maxInflight(), MIN_RECV_DEPTH);
    if (conf.bufferPoolMax() / 4 < smallest) {
      throw new IllegalArgumentException("hadoop.hpc.transport.buffer.pool.max="
          + conf.bufferPoolMax() + " is too small for verbs: receive rings may use a quarter of"
          + " it, less than the smallest ring (" + smallest + " bytes); raise it to at least "
          + 4 * smallest);
    }
  }

  /** The ring of a connection of a fresh transport configured by {@code conf} (tests). */
  static long ringBytes(TransportConf conf) {
    int wanted = wantedDepth(conf);
    long budget = conf.bufferPoolMax() / 4;
    for (int d = wanted; d >= MIN_RECV_DEPTH; d--) {
      if (ringBytes(conf.maxInflight(), d) <= budget) {
        return ringBytes(conf.maxInflight(), d);
      }
    }
    return 0;
  }

  // ======================================================================================
  // The ring (loop)
  // ======================================================================================

  /**
   * Reserves the ring within the rings' budget and takes its chunks from the pool; returns the
   * receive depth. On failure what was taken stays recorded for {@link #finish}.
   */
  int take(InetSocketAddress remote, int maxInflight) throws TransportException {
    depth = transport.reserveRing(remote);
    reserved = ringBytes(maxInflight, depth);
    int chunks = headerChunks(maxInflight, depth);
    headerChunks = new Buffer[chunks];
    headerViews = new ByteBuffer[chunks];
    headerMrs = new VerbsTransport.MrInfo[chunks];
    for (int c = 0; c < chunks; c++) {
      headerChunks[c] = chunk(remote);
      headerViews[c] = headerChunks[c].nio().clear();
      headerMrs[c] = transport.mr(headerChunks[c]);
    }
    for (int i = 0; i < depth; i++) {
      recvChunks[i] = chunk(remote);
      recvViews[i] = recvChunks[i].nio().clear();
      recvMrs[i] = transport.mr(recvChunks[i]);
    }
    return depth;
  }

  private Buffer chunk(InetSocketAddress remote) throws TransportException {
    Buffer b = transport.bufferPool().allocate(VerbsTransport.EAGER_SIZE);
    if (b == null) {
      throw new TransportException("verbs connection to " + remote + ": the buffer pool has no"
          + " room for a " + reserved + "-byte receive ring now ("
          + transport.bufferPool() + "; raise hadoop.hpc.transport.buffer.pool.max)");
    }
    return b;
  }

  /** Header slot {@code i}'s chunk view; the slot is at {@link #headerAt}. */
  ByteBuffer headers(int i) {
    return headerViews[i / HEADERS_PER_CHUNK];
  }

  static int headerAt(int i) {
    return (i % HEADERS_PER_CHUNK) * VerbsHeader.BYTES;
  }

  long headerAddress(int i) {
    int c = i / HEADERS_PER_CHUNK;
    return headerMrs[c].addr() + headerChunks[c].slabOffset() + headerAt(i);
  }

  int headerLkey(int i) {
    return headerMrs[i / HEADERS_PER_CHUNK].lkey();
  }

  /** Receive slot {@code i}'s eager payload as received (never handed out). */
  ByteBuffer payload(int i) {
    return recvViews[i];
  }

  /** Posts receive slot {@code i} on the queue pair of {@code cmId}; 0 or -errno. */
  int post(long cmId, long wrId, int i) {
    int rc = VerbsNatives.postRecv(cmId, wrId, headerAddress(i), VerbsHeader.BYTES,
        headerLkey(i), recvMrs[i].addr() + recvChunks[i].slabOffset(),
        VerbsTransport.EAGER_SIZE, recvMrs[i].lkey());
    if (rc != 0) {
      return rc;
    }
    posted[i] = true;
    postedCount++;
    return 0;
  }

  /** Receives posted and not completed yet. */
  int posted() {
    return postedCount;
  }

  /** A receive completed: true when slot {@code i} was posted (it no longer is). */
  boolean completed(int i) {
    if (i >= depth || !posted[i]) {
      return false;
    }
    posted[i] = false;
    postedCount--;
    return true;
  }

  /** Slot {@code i}'s message waits for pool memory (its credit is not returned meanwhile). */
  void hold(int i) {
    held.add(i);
  }

  /** The oldest held slot, or -1. */
  int firstHeld() {
    Integer i = held.peek();
    return i == null ? -1 : i;
  }

  /** The oldest held slot was delivered. */
  void released() {
    held.poll();
  }

  /**
   * The queue pair is destroyed: nothing is posted or held any more. The chunks go back to the
   * pool when {@code qpGone}; otherwise the HCA may still write into posted receives, so they
   * are leaked rather than reused. The budget is returned either way, once.
   */
  void finish(boolean qpGone) {
    for (int i = 0; i < depth; i++) {
      posted[i] = false;
    }
    held.clear();
    postedCount = 0;
    if (qpGone) {
      release();
    } else {
      transport.releaseRing(reserved);
      reserved = 0;
    }
  }

  /** Gives the ring's chunks back to the pool (once: the references are dropped). */
  private void release() {
    for (int i = 0; i < recvChunks.length; i++) {
      if (recvChunks[i] != null) {
        recvChunks[i].release();
        recvChunks[i] = null;
        recvViews[i] = null;
      }
    }
    if (headerChunks != null) {
      for (int c = 0; c < headerChunks.length; c++) {
        if (headerChunks[c] != null) {
          headerChunks[c].release();
          headerChunks[c] = null;
        }
      }
      headerChunks = null;
      headerViews = null;
    }
    if (reserved > 0) {
      transport.releaseRing(reserved);
      reserved = 0;
    }
  }
}
