/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.ConnectionClosedException;

/**
 * The client's end of a transfer stream (a DFSClient, or a DataNode writing to its pipeline
 * mirror). Upstream bytes go as DATA requests, at most {@code window} not yet consumed by the
 * DataNode; downstream bytes arrive as answers to the PULL requests it keeps parked there,
 * each PULL going back once the bytes of its answer were read.
 */
final class ClientPipe extends Pipe {
  private final BufferPool pool;
  private final int chunk;
  private final int window;
  private static final long LINGER_NANOS = 5_000_000_000L;
  private long sent;
  private long acked;
  private long consumedByPeer;
  private static final Object FIN_MARK = new Object();
  private static final int MAX_EARLY = 1 << 16;
  private final java.util.HashMap<Integer, Object> early = new java.util.HashMap<>();
  private int nextDown;
  private final int pullBatch;
  /** PULLs owed that go back early, when the reader has nothing left (half a batch). */
  private final int idleBatch;
  private int owedPulls;
  private boolean finReceived;
  /** Told once, after the connection closed (the client counts its open streams). */
  private final java.util.concurrent.atomic.AtomicReference<Runnable> onClosed =
      new java.util.concurrent.atomic.AtomicReference<>();
  private final Completion<Buffer> onAck = new Completion<>() {
    @Override
    public void completed(Buffer answer) {
      ByteBuffer a = answer.nio();
      int got = a.remaining();
      boolean whole = got >= TransferWire.ANSWER_HEADER;
      long consumed = whole ? a.getLong(a.position() + 8) : 0;
      answer.release();
      synchronized (ClientPipe.this) {
        acked++;
        ClientPipe.this.notifyAll();
      }
      if (!whole) {
        lost(new IOException(remoteAddress() + " answered a DATA message with "
            + got + " bytes, fewer than an answer header ("
            + TransferWire.ANSWER_HEADER + ")"));
        return;
      }
      credit(consumed);
    }

    @Override
    public void failed(Throwable cause) {
      synchronized (ClientPipe.this) {
        acked++;
        ClientPipe.this.notifyAll();
      }
      lost(cause);
    }
  };
  private final Completion<Buffer> onPull = new Completion<>() {
    @Override
    public void completed(Buffer answer) {
      pulled(answer);
    }

    @Override
    public void failed(Throwable cause) {
      lost(cause);
    }
  };

  private ClientPipe(Connection connection, BufferPool pool, TransferMetrics metrics, int chunk,
      int window, int pulls) {
    super(connection, metrics);
    this.pool = pool;
    this.chunk = chunk;
    this.window = window;
    this.pullBatch = Math.max(1, pulls / 2);
    this.idleBatch = Math.max(1, pullBatch / 2);
  }

  /**
   * The pipe over {@code c} once the HELLO was answered with these windows: {@code park} PULLs
   * parked at the DataNode.
   */
  static ClientPipe started(Connection c, BufferPool pool, TransferMetrics metrics, int chunk,
      int window, int park) {
    ClientPipe p = new ClientPipe(c, pool, metrics, chunk, window, park);
    p.pull(park);
    return p;
  }

  /**
   * Runs {@code r} once, when this end has closed (and closed its connection); at once if it
   * has. Set before the stream is handed out.
   */
  void whenClosed(Runnable r) {
    onClosed.set(r);
    if (isClosed() && !connection.isOpen()) {
      Runnable now = onClosed.getAndSet(null);
      if (now != null) {
        now.run();
      }
    }
  }

  @Override
  int write(ByteBuffer src) throws IOException {
    if (!src.hasRemaining()) {
      return 0;
    }
    synchronized (this) {
      if (closed) {
        throw new IOException("write to a closed transfer stream to " + remoteAddress());
      }
      if (finReceived) {
        // the DataNode ended the stream: as on TCP after the peer's FIN, bytes written now are
        // accepted and never read (the caller learns from the stream's end, not from a reset)
        int n = src.remaining();
        src.position(src.limit());
        return n;
      }
      IOException f = failure();
      if (f != null) {
        throw new IOException(f.getMessage(), f);
      }
      if (!roomForData()) {
        return 0;
      }
    }
    int n = Math.min(src.remaining(), chunk);
    Buffer b = pool.allocate(n + TransferWire.REQUEST_HEADER);
    if (b == null) {
      return 0; // registered memory is full: the selector polls again
    }
    ByteBuffer nio = b.nio();
    int seq;
    synchronized (this) {
      seq = (int) sent++;
    }
    TransferWire.requestHeader(nio, TransferWire.DATA, seq);
    int limit = src.limit();
    src.limit(src.position() + n);
    nio.put(src);
    src.limit(limit);
    nio.flip();
    if (!send(b)) {
      synchronized (this) {
        sent--;
        notifyAll();
      }
      src.position(src.position() - n);
      b.release();
      return 0;
    }
    metrics.bytesOut(n);
    return n;
  }

  @Override
  synchronized boolean writable() {
    return closed || finReceived || failure() != null || roomForData();
  }

  /**
   * One more DATA message may go: the DataNode has consumed all but fewer than {@code window}
   * of those sent, and fewer than {@code window} are unanswered. The second bound keeps the
   * parked PULLs their places within {@code max.inflight} (window + parked PULLs stay below
   * it): a DataNode's credit can arrive in a PULL's answer ahead of the ACKs it sends right
   * after, and a writer woken by it sending on could otherwise fill the places a PULL going
   * back needs (measured: a cold, slow JVM lost a write with "no room for a PULL"). The held
   * ACKs go out once {@code window} are held, so this bound never stalls the stream.
   */
  private boolean roomForData() {
    return sent - consumedByPeer < window && sent - acked < window;
  }

  private void credit(long consumed) {
    synchronized (this) {
      if (consumed > consumedByPeer && consumed <= sent) {
        consumedByPeer = consumed;
      }
    }
    signal();
  }

  private void pull() {
    pull(1);
  }

  /**
   * Sends DATA message {@code data} with the PULLs owed so far riding along (one write on tcp
   * instead of two: a pread's status goes back with the PULLs its answers took); false under
   * back-pressure (the DATA message not sent; the PULLs owed as before).
   */
  private boolean send(Buffer data) {
    int ride;
    synchronized (this) {
      ride = owedPulls;
      owedPulls = 0;
    }
    Buffer[] all = ride == 0 ? null : new Buffer[1 + ride];
    if (all == null || !pullBuffers(all, 1, ride, TransferWire.RIDES)) {
      owe(ride, false); // none owed, or no memory for them now: they go in a later batch
      return connection.request(data, onAck);
    }
    all[0] = data;
    @SuppressWarnings("unchecked")
    Completion<Buffer>[] completions = new Completion[all.length];
    completions[0] = onAck;
    java.util.Arrays.fill(completions, 1, all.length, onPull);
    int taken = connection.request(all, completions, all.length);
    for (int i = Math.max(1, taken); i < all.length; i++) {
      all[i].release();
    }
    if (taken == 0) {
      owe(ride, false);
      return false;
    }
    if (taken < all.length) {
      lost(new IOException("no room for a PULL to " + remoteAddress()));
    }
    return true;
  }

  /**
   * Fills {@code into[from, from + n)} with PULL requests ({@code flags}); false, having
   * allocated nothing, when registered memory is short.
   */
  private boolean pullBuffers(Buffer[] into, int from, int n, byte flags) {
    for (int i = 0; i < n; i++) {
      Buffer b = pool.allocate(TransferWire.REQUEST_HEADER);
      if (b == null) {
        for (int j = 0; j < i; j++) {
          into[from + j].release();
        }
        return false;
      }
      TransferWire.requestHeader(b.nio(), TransferWire.PULL, flags, 0);
      b.nio().flip();
      into[from + i] = b;
    }
    return true;
  }

  /** Posts {@code n} PULLs together (one write on tcp). */
  private void pull(int n) {
    if (n <= 0) {
      return;
    }
    Buffer[] pulls = new Buffer[n];
    if (!pullBuffers(pulls, 0, n, (byte) 0)) {
      lost(new IOException("no registered memory for a PULL to " + remoteAddress()));
      return;
    }
    int taken = connection.request(pulls, n, onPull);
    if (taken < n) {
      for (int i = taken; i < n; i++) {
        pulls[i].release();
      }
      lost(new IOException("no room for a PULL to " + remoteAddress()));
    }
  }

  private void pulled(Buffer answer) {
    ByteBuffer a = answer.nio();
    if (a.remaining() < TransferWire.ANSWER_HEADER) {
      answer.release();
      lost(new IOException(remoteAddress() + " sent a short answer"));
      return;
    }
    byte type = a.get(a.position());
    int seq = TransferWire.seq(a);
    credit(a.getLong(a.position() + 8));
    switch (type) {
      case TransferWire.DATA:
        a.position(a.position() + TransferWire.ANSWER_HEADER);
        inOrder(seq, answer); // its PULL goes back once the bytes are read: a slow reader
        break;                // holds the DataNode's writer (the stock write timeout)
      case TransferWire.PACKETS:
        a.position(a.position() + TransferWire.ANSWER_HEADER);
        ByteBuffer[] views = packets(a);
        if (views == null) {
          answer.release();
          lost(new IOException(remoteAddress() + " sent a malformed PACKETS answer"));
          return;
        }
        for (int i = 1; i < views.length; i++) {
          answer.retain();
        }
        inOrder(seq, new Views(answer, views));
        break;
      case TransferWire.EMPTY:
        answer.release();
        owe(1, false); // credit only: its PULL goes back with the next full batch
        break;
      case TransferWire.FIN:
        answer.release();
        inOrder(seq, FIN_MARK);
        break;
      default:
        answer.release();
        lost(new IOException(remoteAddress() + " sent an answer of unknown type " + type));
    }
  }

  /** A PACKETS answer as the views to read in order. */
  private static final class Views {
    final Buffer owner;
    final ByteBuffer[] views;

    Views(Buffer owner, ByteBuffer[] views) {
      this.owner = owner;
      this.views = views;
    }
  }

  /**
   * The views of a PACKETS answer's payload ({@code a}, positioned after the answer header) in
   * stream order: head 1, data 1, head 2, data 2, ...; null when its lengths do not add up.
   */
  static ByteBuffer[] packets(ByteBuffer a) {
    if (a.remaining() < 4) {
      return null;
    }
    int at = a.position();
    int k = a.getInt(at);
    if (k < 1 || k > TransferWire.MAX_PACKETS || a.remaining() < 4 + 8L * k) {
      return null;
    }
    long heads = 0;
    long data = 0;
    for (int i = 0; i < k; i++) {
      int h = a.getInt(at + 4 + 8 * i);
      int d = a.getInt(at + 8 + 8 * i);
      if (h < 0 || d < 0) {
        return null;
      }
      heads += h;
      data += d;
    }
    int headAt = at + 4 + 8 * k;
    if (headAt + heads + data != a.limit() || data == 0) {
      return null;
    }
    int dataAt = headAt + (int) heads;
    ByteBuffer[] views = new ByteBuffer[2 * k];
    for (int i = 0; i < k; i++) {
      int h = a.getInt(at + 4 + 8 * i);
      int d = a.getInt(at + 8 + 8 * i);
      views[2 * i] = a.duplicate().limit(headAt + h).position(headAt);
      views[2 * i + 1] = a.duplicate().limit(dataAt + d).position(dataAt);
      headAt += h;
      dataAt += d;
    }
    return views;
  }

  /** Delivers downstream messages in the DataNode's order; event thread. */
  private void inOrder(int seq, Object message) {
    synchronized (this) {
      if (isClosed()) {
        release(message); // the reader is gone: nothing delivers it
        return;
      }
      if (seq - nextDown < 0 || seq - nextDown >= MAX_EARLY || early.containsKey(seq)) {
        release(message);
        lost(new IOException(remoteAddress() + " sent message " + seq + " while " + nextDown
            + " was next"));
        return;
      }
      early.put(seq, message);
    }
    while (true) {
      Object next;
      synchronized (this) {
        next = early.remove(nextDown);
        if (next == null) {
          return;
        }
        nextDown++;
      }
      if (next == FIN_MARK) {
        synchronized (this) {
          finReceived = true;
        }
        ended();
        connection.close();
      } else if (next instanceof Views) {
        arrived(((Views) next).owner, ((Views) next).views);
      } else {
        arrived((Buffer) next);
      }
    }
  }

  /** Gives back the memory of a message that will not be delivered. */
  private static void release(Object message) {
    if (message instanceof Buffer) {
      ((Buffer) message).release();
    } else if (message instanceof Views) {
      for (int i = 0; i < ((Views) message).views.length; i++) {
        ((Views) message).owner.release();
      }
    }
  }

  /** Releases the messages that arrived ahead of one still missing (at close). */
  private void dropEarly() {
    Object[] dropped;
    synchronized (this) {
      dropped = early.values().toArray();
      early.clear();
    }
    for (Object m : dropped) {
      release(m);
    }
  }

  /**
   * PULLs go back in batches of half the ones parked, or, when nothing is left to read (the
   * reader is about to wait for the DataNode), as soon as a quarter of them are owed; each
   * batch is one request call, so one write on tcp. Posting every owed PULL whenever the reader
   * ran dry cost one write per small answer: a 4 KiB pread reads about seven (the DataNode
   * writes its response proto field by field), measured 14.1 write calls per pread of the
   * process against 12.5 with a quarter (stock 11.0), sequential reads unchanged within noise.
   */
  @Override
  protected void consumed(int n) {
    owe(n, true);
  }

  /**
   * {@code n} more PULLs to post again, posted together once a batch is owed, or
   * ({@code whenIdle}) once half a batch is owed and the reader has nothing left. At most a
   * batch less one is owed, so at least half the PULLs stay parked.
   */
  private void owe(int n, boolean whenIdle) {
    int post;
    synchronized (this) {
      owedPulls += n;
      if (owedPulls < pullBatch && (!whenIdle || owedPulls < idleBatch || queued() > 0)) {
        return;
      }
      post = owedPulls;
      owedPulls = 0;
    }
    if (isClosed() || isEnded()) {
      return;
    }
    pull(post);
  }

  private void lost(Throwable cause) {
    synchronized (this) {
      if (finReceived || closed) {
        return; // operations failing after the DataNode's FIN or this end's close
      }
    }
    if (cause instanceof ConnectionClosedException) {
      broken(new IOException("Connection reset: transfer stream to " + remoteAddress()
          + " closed", cause));
    } else {
      broken(cause instanceof IOException ? (IOException) cause
          : new IOException(String.valueOf(cause.getMessage()), cause));
    }
    if (!isClosed()) {
      connection.close();
    }
  }

  /**
   * Closes the connection once every DATA request sent has been answered (the DataNode has
   * them: closing earlier could drop the last packet still queued in the transport, as a TCP
   * close does not), waiting at most 5 s.
   */
  @Override
  protected void closeConnection() {
    long deadline = System.nanoTime() + LINGER_NANOS;
    boolean interrupted = false;
    boolean unanswered;
    synchronized (this) {
      unanswered = acked < sent;
    }
    if (unanswered && connection.isOpen()) {
      pull(); // a DataNode holds DATA answers until it sends something: a PULL makes it send them
    }
    while (true) {
      long left;
      synchronized (this) {
        left = deadline - System.nanoTime();
        if (acked >= sent || !connection.isOpen() || left <= 0) {
          break;
        }
      }
      long slice = Math.min(left, TimeUnit.MILLISECONDS.toNanos(TransferSelector.POLL_MS));
      if (connection.readOnCaller(slice)) { // the ACKs come to this thread (caller reads)
        if (Thread.currentThread().isInterrupted()) {
          break; // status kept
        }
        continue;
      }
      synchronized (this) {
        if (acked < sent && connection.isOpen()) {
          try {
            TimeUnit.NANOSECONDS.timedWait(this, slice);
          } catch (InterruptedException e) {
            interrupted = true;
            break;
          }
        }
      }
    }
    connection.close();
    dropEarly();
    Runnable r = onClosed.getAndSet(null);
    if (r != null) {
      r.run();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
