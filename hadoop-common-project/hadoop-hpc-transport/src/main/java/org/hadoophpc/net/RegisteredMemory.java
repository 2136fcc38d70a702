/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net;

/**
 * What a transport holds of the memory bounded by {@code hadoop.hpc.transport.buffer.pool.max}
 * (registered, i.e. pinned, for verbs), as {@link Transport#registeredMemory()} reports it. A
 * snapshot: the numbers are read one after another, not atomically together.
 *
 * @param reservedBytes slabs the pool holds now (never above {@code maxBytes})
 * @param usedBytes     chunks handed out now (messages in flight, buffers held by callers, and
 *                      receive rings)
 * @param ringBytes     the part of {@code usedBytes} held by the connections' receive rings
 *                      (verbs; 0 for tcp)
 * @param maxBytes      the bound, {@code hadoop.hpc.transport.buffer.pool.max}
 */
public record RegisteredMemory(long reservedBytes, long usedBytes, long ringBytes,
    long maxBytes) {
}
