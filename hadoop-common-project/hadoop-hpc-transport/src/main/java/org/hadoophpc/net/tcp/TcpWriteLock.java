/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.IOException;
import java.util.concurrent.locks.ReentrantLock;

import org.hadoophpc.net.Completion;
import org.hadoophpc.net.Completions;
import org.hadoophpc.net.ConnectionClosedException;

/**
 * One rule: who may touch a connection's socket and frame state, and when a caller writes its
 * own frame instead of handing it to the event loop.
 *
 * <p>The loop holds the lock whenever it works on the connection ({@link #lock}). A caller
 * takes it only with {@code tryLock} and only when the connection is idle (nothing handed to
 * the loop and not yet written, nothing being written): then it writes its frame itself, on its
 * own thread, and a message costs no hand-off to the loop. What the socket does not take, and a
 * write that fails, are left to the loop. Writing callers never wait for the lock, so callbacks
 * the loop runs under it cannot deadlock with them; and a caller never runs user code under it
 * while writing: a file answer's completion met while it writes runs after it unlocked. The one
 * caller that does wait for it is a reader of a connection that leaves reads to callers
 * ({@link TcpCallerReads}), which holds no other lock then and runs completions under it, as
 * the loop does.
 */
final class TcpWriteLock {
  private final ReentrantLock lock = new ReentrantLock();
  /** The caller writing under the lock; null when the loop holds it. */
  private Thread writer;
  private Completion<Void> deferredDone;
  private ConnectionClosedException deferredNotSent;
  /** A write by a caller failed: the loop closes the connection with it. */
  private volatile IOException brokenBy;

  /** The loop, before it works on the connection (waits while a caller writes). */
  void lock() {
    lock.lock();
  }

  /** Takes the lock if it is free (or this thread holds it); never waits. */
  boolean tryLock() {
    return lock.tryLock();
  }

  void unlock() {
    lock.unlock();
  }

  boolean heldByMe() {
    return lock.isHeldByCurrentThread();
  }

  /** The failure of a caller's write, for the loop to close the connection with; or null. */
  IOException brokenBy() {
    return brokenBy;
  }

  /**
   * Writes {@code frame} through {@code conn} on this thread if the lock is free (or this
   * thread holds it: the loop answering inline) and {@code conn} is idle; false, having done
   * nothing, when the frame must be handed to the loop instead. The loop is called in (after
   * unlocking) when it must look at the connection.
   */
  boolean tryWrite(OutboundFrame frame, TcpConnection conn) {
    return tryWrite(frame, null, 1, conn);
  }

  /** {@link #tryWrite(OutboundFrame, TcpConnection)} of several frames, in one write. */
  boolean tryWrite(OutboundFrame[] frames, int count, TcpConnection conn) {
    return tryWrite(null, frames, count, conn);
  }

  private boolean tryWrite(OutboundFrame frame, OutboundFrame[] frames, int count,
      TcpConnection conn) {
    if (!lock.tryLock()) {
      return false;
    }
    Completion<Void> done;
    ConnectionClosedException notSent;
    boolean handToLoop;
    try {
      if (brokenBy != null || !conn.idleForCaller()) {
        return false;
      }
      Thread outer = writer;
      writer = Thread.currentThread();
      try {
        handToLoop = frames == null ? conn.writeByCaller(frame)
            : conn.writeByCaller(frames, count);
      } catch (IOException e) {
        brokenBy = e; // the frame is the connection's now: the loop's close drops it
        handToLoop = true;
      } finally {
        writer = outer;
      }
      done = deferredDone;
      notSent = deferredNotSent;
      deferredDone = null;
      deferredNotSent = null;
    } finally {
      lock.unlock();
    }
    if (handToLoop) {
      conn.schedule();
    }
    if (done != null) {
      complete(done, notSent);
    }
    return true;
  }

  /** A file answer is over: tells its completion, after unlocking when a caller wrote it. */
  void fileDone(Completion<Void> done, ConnectionClosedException notSent) {
    if (writer == Thread.currentThread() && deferredDone == null) {
      deferredDone = done;
      deferredNotSent = notSent;
    } else {
      complete(done, notSent);
    }
  }

  private static void complete(Completion<Void> done, ConnectionClosedException notSent) {
    if (notSent == null) {
      Completions.succeed(done, null);
    } else {
      Completions.fail(done, notSent);
    }
  }
}
