/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.spi.AbstractSelectableChannel;
import java.nio.channels.spi.AbstractSelectionKey;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Waits for {@link TransferChannel}s to become readable or writable, as Hadoop's
 * {@code SocketIOWithTimeout.SelectorPool} uses a selector: register one channel, select with a
 * timeout, cancel the key, {@code selectNow()} to drop it. Channels wake it when their stream
 * changes; it also re-checks every {@value #POLL_MS} ms for the one wait nothing signals
 * (registered memory that freed up). An interrupt wakes it (through {@code begin()/end()}) with
 * the thread's interrupt status kept, so the caller raises {@code InterruptedIOException}.
 *
 * <p>Where the one channel waited on is a stream whose connection leaves its reads to callers
 * ({@link Pipe#readOnCaller}), the waiting thread reads that connection itself instead of
 * sleeping until the transport's thread hands it a message; when it stops, other threads waiting
 * on the stream are woken so one of them reads next.
 */
final class TransferSelector extends AbstractSelector {
  static final long POLL_MS = 20;

  private final Object lock = new Object();
  private final Set<SelectionKey> keys = new HashSet<>();
  private final Set<SelectionKey> selected = new HashSet<>();
  private boolean woken;
  /** A channel's stream changed since the selecting thread last looked (guarded by lock). */
  private boolean signalled;
  /** The stream whose connection the selecting thread reads now, or null; and that thread. */
  private volatile Pipe reading;
  private volatile Thread readingThread;

  TransferSelector(SelectorProvider provider) {
    super(provider);
  }

  @Override
  protected SelectionKey register(AbstractSelectableChannel ch, int ops, Object attachment) {
    if (!(ch instanceof TransferChannel)) {
      throw new IllegalArgumentException(ch + " is not a transfer stream channel");
    }
    TransferChannel c = (TransferChannel) ch;
    TransferSelectionKey k = new TransferSelectionKey(c, this);
    k.attach(attachment);
    k.interestOps(ops);
    synchronized (lock) {
      keys.add(k);
    }
    c.watchedBy(this);
    return k;
  }

  @Override
  public Set<SelectionKey> keys() {
    ensureOpen();
    synchronized (lock) {
      return Collections.unmodifiableSet(new HashSet<>(keys));
    }
  }

  @Override
  public Set<SelectionKey> selectedKeys() {
    ensureOpen();
    return selected;
  }

  @Override
  public int selectNow() {
    return select(-1L, false);
  }

  @Override
  public int select(long timeout) {
    if (timeout < 0) {
      throw new IllegalArgumentException("negative timeout " + timeout);
    }
    return select(timeout == 0 ? Long.MAX_VALUE : timeout, true);
  }

  @Override
  public int select() {
    return select(Long.MAX_VALUE, true);
  }

  @Override
  public java.nio.channels.Selector wakeup() {
    synchronized (lock) {
      woken = true;
      lock.notifyAll();
    }
    Pipe r = reading;
    if (r != null) {
      r.wakeReader();
    }
    return this;
  }

  /** A registered channel's stream changed. */
  void changed() {
    synchronized (lock) {
      signalled = true;
      lock.notifyAll();
    }
    Pipe r = reading;
    if (r != null && Thread.currentThread() != readingThread) {
      r.wakeReader(); // the selecting thread waits on the connection, not on the lock
    }
  }

  @Override
  protected void implCloseSelector() {
    wakeup();
    List<SelectionKey> all;
    synchronized (lock) {
      all = new ArrayList<>(keys);
      keys.clear();
      selected.clear();
    }
    for (SelectionKey k : all) {
      drop((TransferSelectionKey) k);
    }
  }

  private int select(long timeoutMs, boolean wait) {
    ensureOpen();
    long deadline = wait && timeoutMs != Long.MAX_VALUE
        ? System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs) : Long.MAX_VALUE;
    boolean interruptible = wait;
    if (interruptible) {
      begin();
    }
    try {
      boolean mayRead = true;
      while (true) {
        dropCancelled();
        TransferSelectionKey readKey;
        long slice;
        synchronized (lock) {
          int n = collect();
          if (n > 0 || woken || !wait || Thread.currentThread().isInterrupted()) {
            woken = false;
            return n;
          }
          long left = deadline == Long.MAX_VALUE ? POLL_MS
              : TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
          if (left <= 0) {
            return 0;
          }
          slice = Math.min(left, POLL_MS);
          readKey = mayRead ? soleKey() : null;
          if (readKey == null) {
            mayRead = true;
            if (!signalled) { // else what changed (say, another reader left) is looked at first
              try {
                lock.wait(slice);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // the caller sees it and raises its own error
              }
            }
            signalled = false;
            continue;
          }
          signalled = false;
          readingThread = Thread.currentThread();
          reading = readKey.transferChannel().pipe();
        }
        Pipe pipe = readKey.transferChannel().pipe();
        boolean read;
        try {
          read = pipe.readOnCaller(TimeUnit.MILLISECONDS.toNanos(slice)); // no lock held
        } finally {
          reading = null;
        }
        if (read) {
          readKey.transferChannel().signalOthers(this); // one of them reads next
        } else {
          mayRead = false; // another thread reads it: wait for its signal
        }
      }
    } finally {
      if (interruptible) {
        end();
      }
    }
  }

  /** Under {@link #lock}: the one valid key registered, or null. */
  private TransferSelectionKey soleKey() {
    if (keys.size() != 1) {
      return null;
    }
    SelectionKey k = keys.iterator().next();
    return k.isValid() ? (TransferSelectionKey) k : null;
  }

  /** Under {@link #lock}: sets the ready keys; their number. */
  private int collect() {
    int n = 0;
    for (SelectionKey k : keys) {
      if (!k.isValid()) {
        continue;
      }
      TransferSelectionKey t = (TransferSelectionKey) k;
      int ready = t.transferChannel().readyOps() & t.interestOps();
      if (ready != 0) {
        t.readyOps(ready);
        selected.add(t);
        n++;
      }
    }
    return n;
  }

  /** Deregisters cancelled keys; never under {@link #lock} (the channel's key lock comes first). */
  private void dropCancelled() {
    Set<SelectionKey> cancelled = cancelledKeys();
    List<SelectionKey> gone;
    synchronized (cancelled) {
      if (cancelled.isEmpty()) {
        return;
      }
      gone = new ArrayList<>(cancelled);
      cancelled.clear();
    }
    synchronized (lock) {
      keys.removeAll(gone);
      selected.removeAll(gone);
    }
    for (SelectionKey k : gone) {
      drop((TransferSelectionKey) k);
    }
  }

  private void drop(TransferSelectionKey k) {
    deregister((AbstractSelectionKey) k);
    k.transferChannel().unwatchedBy(this);
  }

  private void ensureOpen() {
    if (!isOpen()) {
      throw new ClosedSelectorException();
    }
  }
}
