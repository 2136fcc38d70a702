/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.function.Consumer;

/**
 * A map from {@code int} to non-null values with open addressing (linear probing, deletion by
 * shifting later entries back), so that putting and removing allocate nothing: the rendezvous
 * bookkeeping of a {@link VerbsConnection} (request id to the payload it keeps exposed) runs
 * once per large message, where a {@code HashMap<Integer, ..>} would box the key and allocate a
 * node each time. Grows by doubling at half full. Not thread-safe (event-loop confined).
 */
final class IntMap<V> {
  private int[] keys;
  private Object[] values;
  private int size;

  IntMap() {
    keys = new int[16];
    values = new Object[16];
  }

  int size() {
    return size;
  }

  private static int home(int key, int mask) {
    int h = key * 0x9E3779B9;
    return (h ^ (h >>> 16)) & mask;
  }

  /** Index of {@code key}, or of the empty slot where it would go. */
  private int find(int key) {
    int mask = keys.length - 1;
    int i = home(key, mask);
    while (values[i] != null && keys[i] != key) {
      i = (i + 1) & mask;
    }
    return i;
  }

  @SuppressWarnings("unchecked")
  V get(int key) {
    return (V) values[find(key)];
  }

  /** Maps {@code key} to {@code value} (not null); returns what it mapped to before, or null. */
  @SuppressWarnings("unchecked")
  V put(int key, V value) {
    if (value == null) {
      throw new IllegalArgumentException("null value");
    }
    int i = find(key);
    V previous = (V) values[i];
    keys[i] = key;
    values[i] = value;
    if (previous == null && ++size * 2 > keys.length) {
      grow();
    }
    return previous;
  }

  /** Removes {@code key}; returns its value, or null when it had none. */
  @SuppressWarnings("unchecked")
  V remove(int key) {
    int hole = find(key);
    V removed = (V) values[hole];
    if (removed == null) {
      return null;
    }
    values[hole] = null;
    size--;
    // Later entries of the same probe run move back over the hole when their home allows it.
    int mask = keys.length - 1;
    int j = hole;
    while (true) {
      j = (j + 1) & mask;
      if (values[j] == null) {
        return removed;
      }
      int h = home(keys[j], mask);
      boolean staysReachable = hole <= j ? hole < h && h <= j : hole < h || h <= j;
      if (!staysReachable) {
        keys[hole] = keys[j];
        values[hole] = values[j];
        values[j] = null;
        hole = j;
      }
    }
  }

  /** Empties the map, handing each value to {@code action}. */
  @SuppressWarnings("unchecked")
  void clear(Consumer<? super V> action) {
    for (int i = 0; i < values.length; i++) {
      if (values[i] != null) {
        V v = (V) values[i];
        values[i] = null;
        action.accept(v);
      }
    }
    size = 0;
  }

  @SuppressWarnings("unchecked")
  private void grow() {
    int[] oldKeys = keys;
    Object[] oldValues = values;
    keys = new int[oldKeys.length * 2];
    values = new Object[oldValues.length * 2];
    for (int i = 0; i < oldValues.length; i++) {
      if (oldValues[i] != null) {
        int j = find(oldKeys[i]);
        keys[j] = oldKeys[i];
        values[j] = oldValues[i];
      }
    }
  }
}
