/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One rule, the same under both transports: a connection has at most {@code max.inflight}
 * operations in flight, and an answer finds the operation it answers, or nothing. Callers on any
 * thread take a place ({@link #acquire}) before they start an operation and give it back
 * ({@link #release}) once it ended; the connection's event loop puts the started operation in a
 * slot ({@link #add}), which gives it an id naming the slot and a generation, finds it by the id
 * the peer echoes ({@link #find}) and takes it out when it ends ({@link #remove}). An id of an
 * operation that ended, a late answer to a reused slot, or a forged one finds nothing, without a
 * map and without garbage per operation.
 *
 * <p>{@link #acquire}, {@link #release} and {@link #count} from any thread; the rest on the
 * connection's event loop.
 *
 * @param <T> the transport's operation
 */
public final class InflightTable<T extends InflightTable.Entry> {

  /** An operation that may sit in a table; its slot and id belong to the table. */
  public abstract static class Entry {
    private int slot = -1;
    private long id;

    /** The id {@link #add} gave, naming the slot and a generation; 0 before. */
    public final long inflightId() {
      return id;
    }

    /** True between {@link InflightTable#add} and {@link InflightTable#remove}. */
    public final boolean inTable() {
      return slot >= 0;
    }

    /** Forgets the table's state when the object is reused (it must not be in a table). */
    protected final void clearInflight() {
      slot = -1;
      id = 0;
    }
  }

  private final AtomicInteger count = new AtomicInteger();
  private final Entry[] slots;
  private final int[] free;
  private int freeCount;
  private final long maxId;
  private long generation;

  /**
   * @param capacity operations in flight at most ({@code max.inflight}), at least 1
   * @param maxId    the largest id the wire carries (ids are 1 .. maxId; verbs: 2^31 - 1)
   */
  public InflightTable(int capacity, long maxId) {
    if (capacity < 1 || maxId < 2L * capacity) {
      throw new IllegalArgumentException("capacity " + capacity + ", max id " + maxId);
    }
    this.slots = new Entry[capacity];
    this.free = new int[capacity];
    for (int i = capacity - 1; i >= 0; i--) {
      free[freeCount++] = i;
    }
    this.maxId = maxId;
  }

  public int capacity() {
    return slots.length;
  }

  /** Places taken and not given back; any thread. */
  public int count() {
    return count.get();
  }

  /** Takes a place for a new operation; false when {@link #capacity()} are taken. Any thread. */
  public boolean acquire() {
    while (true) {
      int n = count.get();
      if (n >= slots.length) {
        return false;
      }
      if (count.compareAndSet(n, n + 1)) {
        return true;
      }
    }
  }

  /** Gives back a place taken by {@link #acquire}, once per place. Any thread. */
  public void release() {
    count.decrementAndGet();
  }

  /**
   * Loop: {@code e} (which holds a place) takes a free slot and a new id naming it.
   *
   * @return the id, {@code >= 1}
   * @throws IllegalStateException when every slot is in use (more adds than places)
   */
  public long add(T op) {
    Entry e = op; // private fields are reached through the class, not the type variable
    if (freeCount == 0) {
      throw new IllegalStateException("more operations in flight than " + slots.length);
    }
    int slot = free[--freeCount];
    if (++generation > (maxId - slot) / slots.length) {
      generation = 1; // ids start over; a slot's previous id is long gone by then
    }
    e.slot = slot;
    e.id = generation * slots.length + slot;
    slots[slot] = e;
    return e.id;
  }

  /** Loop: the operation with {@code id} while it is in the table, or null. */
  @SuppressWarnings("unchecked")
  public T find(long id) {
    if (id <= 0) {
      return null;
    }
    Entry e = slots[(int) (id % slots.length)];
    return e != null && e.id == id ? (T) e : null;
  }

  /** Loop: the operation in slot {@code i} (0 .. capacity - 1), or null; for sweeps. */
  @SuppressWarnings("unchecked")
  public T at(int i) {
    return (T) slots[i];
  }

  /** Loop: takes {@code e} out of its slot; false when it was not in the table. */
  public boolean remove(T op) {
    Entry e = op;
    int slot = e.slot;
    if (slot < 0 || slots[slot] != e) {
      return false;
    }
    slots[slot] = null;
    free[freeCount++] = slot;
    e.slot = -1;
    return true;
  }
}
