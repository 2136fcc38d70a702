/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Connection;

/**
 * The DataNode's end of a transfer stream. Upstream DATA requests are queued as they arrived
 * (no copy on the event thread) and acknowledged with the consumed count together, after the
 * next answer this end sends ({@link HeldAcks}); the client never has more than {@code window}
 * unconsumed, and one more is a protocol violation that closes the connection. Downstream
 * bytes answer the oldest parked PULL; with none parked, small writes are held for the next
 * PULL ({@link HeldWrites}) and larger ones find the stream not writable. A PULL parked longer
 * than {@code parkMaxMs} is answered EMPTY (the client re-posts it), so an idle stream never
 * runs into the transport's io.timeout.
 */
final class ServerPipe extends Pipe {
  private final BufferPool pool;
  private final int chunk;
  private final int window;
  private final long parkMaxNanos;
  private final ArrayDeque<Long> parked = new ArrayDeque<>();
  private final ArrayDeque<Long> parkedSince = new ArrayDeque<>();
  private long received;
  private long consumed;
  private long reported;
  private boolean creditOwed;
  private boolean finPending;
  private volatile long closedAt;
  private boolean peerGone;
  private int nextUp;
  private int downSeq;
  private final java.util.HashMap<Integer, Buffer> early = new java.util.HashMap<>();
  /** DATA requests not answered yet (guarded by this; their ACKs go after the next answer). */
  private final HeldAcks heldAcks;
  /** File ranges from this size go by the transport's sendfile (where it has one). */
  static final int SENDFILE_MIN = 32 * 1024;
  /** The transport sends block files itself (tcp); then file answers not yet sent. */
  private final boolean sendsFiles;
  /** Block files go by sendfile and the client takes several packets in one answer. */
  private final boolean sendsPackets;
  private int filesInFlight;
  /** Small writes made while no PULL was parked (guarded by this; never with PULLs parked). */
  private final HeldWrites heldWrites;
  private final Completion<Void> fileSent = new Completion<>() {
    @Override
    public void completed(Void v) {
      fileDone();
    }

    @Override
    public void failed(Throwable cause) {
      fileDone();
    }
  };

  ServerPipe(Connection connection, BufferPool pool, TransferMetrics metrics, int chunk,
      int window, long parkMaxMs, boolean clientTakesPackets) {
    super(connection, metrics);
    this.pool = pool;
    this.chunk = chunk;
    this.window = window;
    this.parkMaxNanos = parkMaxMs * 1_000_000L;
    this.sendsFiles = connection.respondsFromFiles();
    this.sendsPackets = sendsFiles && clientTakesPackets;
    this.heldWrites = new HeldWrites(pool);
    this.heldAcks = new HeldAcks(connection, pool);
  }

  /** The most stream bytes in one message. */
  int chunk() {
    return chunk;
  }

  /** True when {@link #transferPackets} may be used on this stream. */
  boolean sendsPackets() {
    return sendsPackets;
  }

  /**
   * Sends {@code k} packets of one block file in one {@link TransferWire#PACKETS} answer: their
   * heads ({@code heads}, position to limit, {@code headLengths} each) and then their data,
   * {@code dataLengths} each, contiguous in {@code file} from {@code position}, by the
   * transport's sendfile ({@link #awaitFilesSent} says when the file is free again). Waits for a
   * parked PULL with {@code waitForRoom}.
   */
  void transferPackets(FileChannel file, long position, ByteBuffer heads, int[] headLengths,
      int[] dataLengths, int k, Waiter waitForRoom) throws IOException {
    long data = 0;
    for (int i = 0; i < k; i++) {
      data += dataLengths[i];
    }
    int size = TransferWire.ANSWER_HEADER + 4 + 8 * k + heads.remaining();
    while (true) {
      Answer a = takeParked(size, TransferWire.PACKETS, true);
      if (a == null) {
        waitForRoom.await();
        continue;
      }
      ByteBuffer nio = a.buffer.nio();
      nio.putInt(k);
      for (int i = 0; i < k; i++) {
        nio.putInt(headLengths[i]).putInt(dataLengths[i]);
      }
      int headBytes = heads.remaining();
      nio.put(heads);
      nio.flip();
      sendFromFile(a, file, position, (int) data);
      metrics.bytesOut(headBytes + data);
      return;
    }
  }

  private synchronized void fileDone() {
    filesInFlight--;
    notifyAll();
  }

  /** A DATA request (positioned after its header); event thread. */
  void onData(Buffer request, int seq, long requestId) {
    boolean flush;
    synchronized (this) {
      if (received - consumed >= window || seq - nextUp < 0 || seq - nextUp >= window
          || early.containsKey(seq)) {
        request.release();
        connection.fail(requestId, TransferError.PROTOCOL.code, "more than " + window
            + " unconsumed DATA messages");
        connection.close();
        return;
      }
      received++;
      early.put(seq, request);
      // at most window held: the client's requests in flight stay within its window + PULLs
      flush = heldAcks.hold(requestId, window);
    }
    while (true) { // in the client's order: a transport may deliver a later message first
      Buffer next;
      synchronized (this) {
        next = early.remove(nextUp);
        if (next == null) {
          break;
        }
        nextUp++;
      }
      arrived(next);
    }
    if (flush) {
      flushAcks();
    }
  }

  /** Answers the held DATA requests now ({@link HeldAcks}). */
  private void flushAcks() {
    sendWithAcks(-1, null);
  }

  /** Answers {@code id} with {@code b} (when not null), then the held DATA requests. */
  private void sendWithAcks(long id, Buffer b) {
    long[] held;
    long ack;
    synchronized (this) {
      held = heldAcks.take();
      ack = consumed;
      if (held != null) {
        reported = Math.max(reported, ack);
      }
    }
    heldAcks.send(id, b, held, ack);
  }

  /**
   * A PULL request; event thread. One posted alone means the client waits to read: the held
   * DATA answers go now; one riding with a DATA message ({@code rides}) leaves them held.
   */
  void onPull(long requestId, boolean rides) {
    if (!rides) {
      flushAcks();
    }
    byte type = 0;
    long ack;
    int seq = -1;
    Buffer held = null;
    int heldBytes = 0;
    synchronized (this) {
      ack = consumed;
      if (heldWrites.any()) { // before all else, FIN too: they were written first
        heldBytes = heldWrites.bytes();
        seq = downSeq++;
        held = heldWrites.answer(seq, ack);
        creditOwed = false;
        reported = ack;
      } else if (finPending || closed) {
        type = TransferWire.FIN;
        finPending = false;
        seq = downSeq++;
      } else if (creditOwed) {
        type = TransferWire.EMPTY; // numbered -1: only DATA and FIN are ordered
        creditOwed = false;
        reported = ack;
      } else {
        parked.add(requestId);
        parkedSince.add(System.nanoTime());
      }
    }
    if (held != null) {
      send(requestId, held);
      metrics.bytesOut(heldBytes);
      signal(); // a writer finding the held answer full may write again
    } else if (type != 0) {
      answer(requestId, type, seq, ack);
    } else {
      signal();
    }
  }

  @Override
  protected void consumed(int n) {
    synchronized (this) {
      consumed += n;
    }
    // a client streaming DATA (more already here) may soon be held by its window: credit now
    returnCredit(true);
  }

  @Override
  protected void drained() {
    returnCredit(false); // the reader waits for DATA: the client may be held by its window
  }

  /**
   * Credit goes back on its own (an EMPTY answer) only when the client may be held by it: half
   * the window or more unacknowledged, and more DATA already waiting ({@code streaming}) or the
   * reader waiting for more. Otherwise the next answer carries it (a request/response exchange
   * then costs no extra messages: a read's op is answered by its response).
   */
  private void returnCredit(boolean streaming) {
    long id = -1;
    long ack;
    synchronized (this) {
      ack = consumed;
      if (ack > reported && received - reported >= Math.max(1, window / 2)
          && (!streaming || received > consumed)) {
        if (parked.isEmpty()) {
          creditOwed = true;
        } else {
          id = parked.poll();
          parkedSince.poll();
          reported = ack;
        }
      }
    }
    if (id >= 0) {
      answer(id, TransferWire.EMPTY, -1, ack);
    }
  }

  @Override
  int write(ByteBuffer src) throws IOException {
    if (!src.hasRemaining()) {
      return 0;
    }
    int held = holdIfNoPull(src);
    if (held > 0) {
      return held; // answers the next PULL
    }
    Answer a = takeParked(Math.min(src.remaining(), chunk) + TransferWire.ANSWER_HEADER,
        TransferWire.DATA, false);
    if (a == null) {
      return 0; // no PULL parked (not writable) or the pool is full (the selector polls again)
    }
    Buffer b = a.buffer;
    long id = a.id;
    int n = b.nio().capacity() - TransferWire.ANSWER_HEADER;
    n = Math.min(n, Math.min(src.remaining(), chunk));
    ByteBuffer nio = b.nio();
    int limit = src.limit();
    src.limit(src.position() + n);
    nio.put(src);
    src.limit(limit);
    nio.flip();
    send(id, b);
    metrics.bytesOut(n);
    return n;
  }

  /** Takes {@code src}'s bytes into the held answer when no PULL is parked and they fit. */
  private synchronized int holdIfNoPull(ByteBuffer src) throws IOException {
    checkOpen();
    return parked.isEmpty() ? heldWrites.take(src) : 0;
  }

  /**
   * Sends {@code prefix}'s bytes (a packet's header and checksums, may be null) and then
   * {@code count} bytes of {@code file} from {@code position}, in as few answers as the chunk
   * size allows. Where the transport sends from files (tcp: {@code sendfile}) the file bytes
   * never enter user memory, and {@link #awaitFilesSent} says when {@code file} is free again;
   * otherwise they are read by the file channel straight into registered memory, never through
   * the JDK's 8 KiB {@code transferTo} fallback. Waits for room with {@code waitForRoom}.
   */
  long transferFrom(FileChannel file, long position, int count, ByteBuffer prefix,
      Waiter waitForRoom) throws IOException {
    int left = count;
    while (left > 0 || (prefix != null && prefix.hasRemaining())) {
      int pre = prefix == null ? 0 : Math.min(prefix.remaining(), chunk);
      int n = Math.min(left, chunk - pre);
      // small ranges (preads) are copied: no wait for the transport's thread at flush
      boolean fromFile = sendsFiles && n >= SENDFILE_MIN;
      Answer a = takeParked(TransferWire.ANSWER_HEADER + pre + (fromFile ? 0 : n),
          TransferWire.DATA, fromFile);
      if (a == null) {
        waitForRoom.await();
        continue;
      }
      Buffer b = a.buffer;
      ByteBuffer nio = b.nio();
      if (pre > 0) {
        int limit = prefix.limit();
        prefix.limit(prefix.position() + pre);
        nio.put(prefix);
        prefix.limit(limit);
      }
      long at = position + (count - left);
      if (fromFile) {
        nio.flip();
        sendFromFile(a, file, at, n);
      } else {
        nio.limit(TransferWire.ANSWER_HEADER + pre + n);
        try {
          while (nio.hasRemaining()) {
            if (file.read(nio, at + nio.position() - TransferWire.ANSWER_HEADER - pre) < 0) {
              throw new EOFException("EOF of " + file + " with " + left + " bytes still to send");
            }
          }
        } catch (IOException | RuntimeException e) {
          // answered as an empty DATA (keeps the numbering); the stream fails anyway
          nio.clear();
          TransferWire.answerHeader(nio, TransferWire.DATA, a.seq, a.ack);
          nio.flip();
          send(a.id, b);
          throw e;
        }
        nio.flip();
        send(a.id, b);
      }
      metrics.bytesOut(pre + n);
      left -= n;
    }
    return count;
  }

  /**
   * Waits until the transport sent every file answer (their files may be closed then), at most
   * {@code timeoutMs}; with none set (0) at most the transport's io.timeout (3 x park.max): a
   * wait here always ends.
   */
  void awaitFilesSent(long timeoutMs) throws IOException {
    long limitNanos = timeoutMs > 0 ? timeoutMs * 1_000_000L : 3 * parkMaxNanos;
    long deadline = System.nanoTime() + limitNanos;
    timeoutMs = limitNanos / 1_000_000L;
    boolean interrupted = false;
    try {
      synchronized (this) {
        while (filesInFlight > 0) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new SocketTimeoutException(filesInFlight + " block file answers to "
                + remoteAddress() + " not sent within " + timeoutMs + " ms");
          }
          try {
            TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, 100_000_000L));
          } catch (InterruptedException e) {
            interrupted = true;
            throw new InterruptedIOException("interrupted waiting for block file answers to "
                + remoteAddress());
          }
        }
      }
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** An answer being made to the oldest parked PULL: its buffer, past the answer header. */
  private static final class Answer {
    final Buffer buffer;
    final long id;
    final int seq;
    final long ack;

    Answer(Buffer buffer, long id, int seq, long ack) {
      this.buffer = buffer;
      this.id = id;
      this.seq = seq;
      this.ack = ack;
    }
  }

  /**
   * Takes the oldest parked PULL with a pooled buffer of {@code size} bytes, its answer header
   * written ({@code type}, numbered, with the consumed count); null when no PULL is parked or
   * the pool is full. {@code fromFile}: the answer will name a file, counted until it was sent.
   */
  private Answer takeParked(int size, byte type, boolean fromFile) throws IOException {
    Buffer b;
    long id;
    long ack;
    int seq;
    synchronized (this) {
      checkOpen();
      if (parked.isEmpty()) {
        return null;
      }
      b = pool.allocate(size);
      if (b == null) {
        return null;
      }
      id = parked.poll();
      parkedSince.poll();
      ack = consumed;
      reported = ack;
      seq = downSeq++;
      if (fromFile) {
        filesInFlight++;
      }
    }
    TransferWire.answerHeader(b.nio(), type, seq, ack);
    return new Answer(b, id, seq, ack);
  }

  /** Answers with {@code a}'s buffer and then {@code length} bytes of {@code file}. */
  private void sendFromFile(Answer a, FileChannel file, long position, int length)
      throws IOException {
    try {
      connection.respondFile(a.id, a.buffer, file, position, length, fileSent);
      flushAcks();
    } catch (RuntimeException e) {
      fileSent.failed(e); // the connection closed meanwhile
      a.buffer.release();
      checkOpen();
      throw new IOException("transfer stream to " + remoteAddress() + " closed", e);
    }
  }

  /** Waits until the stream may have room (the stock write timeout applies). */
  interface Waiter {
    void await() throws IOException;
  }

  @Override
  synchronized boolean writable() {
    return !parked.isEmpty() || closed || peerGone || failure() != null;
  }

  private void checkOpen() throws IOException {
    if (closed) {
      throw new IOException("write to a closed transfer stream from " + remoteAddress());
    }
    if (peerGone) {
      throw new IOException("Connection reset: the transfer stream to " + remoteAddress()
          + " was closed by the client");
    }
    IOException f = failure();
    if (f != null) {
      throw new IOException(f.getMessage(), f);
    }
  }

  /** Answers PULLs parked longer than park.max with EMPTY; called by the handler's timer. */
  void expireParked(long now) {
    boolean flush;
    synchronized (this) {
      flush = heldAcks.overdue(now);
    }
    if (flush) {
      flushAcks();
    }
    while (true) {
      long id;
      long ack;
      synchronized (this) {
        Long since = parkedSince.peek();
        if (since == null || now - since < parkMaxNanos) {
          return;
        }
        parkedSince.poll();
        id = parked.poll();
        ack = consumed;
        reported = ack;
      }
      answer(id, TransferWire.EMPTY, -1, ack);
    }
  }

  /** The client closed the connection or it broke: readers see end of stream. */
  void onConnectionClosed() {
    synchronized (this) {
      parked.clear();
      parkedSince.clear();
      heldAcks.clear(); // the transport failed them with the connection
      heldWrites.drop();
      peerGone = true;
    }
    ended();
  }

  /** When this end was closed (System.nanoTime()), or 0 while open. */
  long closedAt() {
    return closedAt;
  }

  /** Closes the transport connection itself (after FIN had its time, or at shutdown). */
  void connectionClose() {
    synchronized (this) {
      heldWrites.drop(); // no PULL came for them within FIN's time
    }
    connection.close();
  }

  @Override
  protected void closeConnection() {
    closedAt = System.nanoTime();
    long id = -1;
    int seq = -1;
    synchronized (this) {
      if (!parked.isEmpty()) {
        id = parked.poll();
        parkedSince.poll();
        seq = downSeq++;
      } else {
        finPending = true;
      }
    }
    if (id >= 0) {
      answer(id, TransferWire.FIN, seq, consumed());
    }
  }

  private synchronized long consumed() {
    return consumed;
  }

  private void answer(long id, byte type, int seq, long ack) {
    Buffer b = pool.allocate(TransferWire.ANSWER_HEADER);
    if (b == null) {
      connection.fail(id, TransferError.BUSY.code, "no registered memory for an answer");
      return;
    }
    TransferWire.answerHeader(b.nio(), type, seq, ack);
    b.nio().flip();
    if (type == TransferWire.ACK) {
      heldAcks.respond(id, b);
    } else {
      sendWithAcks(id, b);
    }
  }

  /** Answers a PULL with {@code b}, then the held DATA requests. */
  private void send(long id, Buffer b) {
    sendWithAcks(id, b);
  }
}
