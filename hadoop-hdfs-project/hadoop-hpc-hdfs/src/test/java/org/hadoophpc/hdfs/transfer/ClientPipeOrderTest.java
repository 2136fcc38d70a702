/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.BufferPool;
import org.hadoophpc.net.Completion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The client's end of a transfer stream reads the DataNode's messages in the DataNode's order
 * whatever order the transport completes its PULLs in, and gives back the memory of messages
 * that arrived ahead of a missing one when it closes or the DataNode numbers one wrongly.
 */
class ClientPipeOrderTest {
  private final BufferPool pool = new BufferPool(1 << 20, 64 << 10, 64 << 10,
      BufferPool.MemoryRegistrar.NONE);
  private final Parked connection = new Parked();

  @AfterEach
  void tearDown() {
    pool.close();
  }

  /** A connection that keeps each PULL's completion for the test to answer. */
  private static final class Parked extends FakeConnection {
    final List<Completion<Buffer>> pulls = new ArrayList<>();
    /** Each DATA request's completion, for the test to answer (ACK). */
    final List<Completion<Buffer>> data = new ArrayList<>();
    /** Each request call: its requests' type and flags ("DATA", "PULL", "PULL+RIDES"). */
    final List<List<String>> calls = new ArrayList<>();

    @Override
    public int inFlight() {
      return pulls.size();
    }

    @Override
    public boolean request(Buffer request, Completion<Buffer> completion) {
      calls.add(new ArrayList<>());
      take(request, completion);
      return true;
    }

    @Override
    public int request(Buffer[] requests, Completion<Buffer>[] completions, int count) {
      calls.add(new ArrayList<>());
      for (int i = 0; i < count; i++) {
        take(requests[i], completions[i]);
      }
      return count;
    }

    @Override
    public int request(Buffer[] requests, int count, Completion<Buffer> completion) {
      calls.add(new ArrayList<>());
      for (int i = 0; i < count; i++) {
        take(requests[i], completion);
      }
      return count;
    }

    private void take(Buffer request, Completion<Buffer> completion) {
      byte type = request.nio().get(0);
      byte flags = TransferWire.flags(request.nio());
      request.release(); // sent
      calls.get(calls.size() - 1).add(type == TransferWire.DATA ? "DATA"
          : (flags & TransferWire.RIDES) != 0 ? "PULL+RIDES" : "PULL");
      if (type == TransferWire.PULL) {
        pulls.add(completion);
      } else {
        data.add(completion);
      }
    }

  }

  private ClientPipe pipe(int park) {
    ClientPipe p = ClientPipe.started(connection, pool, TransferMetrics.of("order-test"), 4096,
        4, park);
    assertEquals(park, connection.pulls.size(), "PULLs parked at the DataNode");
    return p;
  }

  /** Completes PULL number {@code pull} with a DATA answer numbered {@code seq}. */
  private void answer(int pull, int seq, String text) {
    answer(pull, seq, text, 0);
  }

  /** The same, crediting {@code consumed} DATA messages of this end's. */
  private void answer(int pull, int seq, String text, long consumed) {
    byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
    Buffer b = pool.allocate(TransferWire.ANSWER_HEADER + bytes.length);
    TransferWire.answerHeader(b.nio(), TransferWire.DATA, seq, consumed);
    b.nio().put(bytes).flip();
    connection.pulls.get(pull).completed(b);
  }

  private static String readAll(ClientPipe p) throws IOException {
    ByteBuffer dst = ByteBuffer.allocate(64);
    int n;
    do {
      n = p.read(dst);
    } while (n > 0);
    dst.flip();
    return StandardCharsets.US_ASCII.decode(dst).toString();
  }

  @Test
  void answersCompletedOutOfOrderAreReadInTheDataNodesOrder() throws IOException {
    ClientPipe p = pipe(4);
    answer(0, 2, "cc");
    answer(1, 1, "b");
    assertEquals("", readAll(p), "nothing before message 0");
    answer(2, 0, "aaa");
    assertEquals("aaabcc", readAll(p));
    answer(3, 3, "d");
    assertEquals("d", readAll(p));
    p.close();
    assertEquals(0, pool.outstandingBuffers(), "every message's memory given back");
  }

  /**
   * The PULLs a reader owes go back with the next DATA message, in the same request call (one
   * write on tcp), marked as riding; with none owed a DATA message goes alone.
   */
  @Test
  void owedPullsRideWithTheNextDataMessage() throws IOException {
    ClientPipe p = pipe(8); // batches of 4, of 2 when the reader has nothing left
    answer(0, 0, "a");
    assertEquals("a", readAll(p));
    connection.calls.clear();
    assertEquals(1, p.write(ByteBuffer.wrap(new byte[] {42})));
    assertEquals(List.of(List.of("DATA", "PULL+RIDES")), connection.calls);
    connection.calls.clear();
    assertEquals(1, p.write(ByteBuffer.wrap(new byte[] {43})));
    assertEquals(List.of(List.of("DATA")), connection.calls, "nothing owed: alone");
    assertEquals(9, connection.pulls.size(), "every PULL taken went back");
    connection.open = false; // gone: the close does not wait for the DATA messages' answers
    p.close();
  }

  @Test
  void closingWithMessagesAheadOfAMissingOneGivesTheirMemoryBack() {
    ClientPipe p = pipe(4);
    answer(0, 1, "b");
    answer(1, 2, "c");
    assertTrue(pool.outstandingBuffers() >= 2, "held until message 0 comes");
    p.close();
    assertEquals(0, pool.outstandingBuffers(), "messages 1 and 2 released at close");
    answer(2, 0, "a"); // arrives after the close: dropped, not leaked
    assertEquals(0, pool.outstandingBuffers());
  }

  @Test
  void aMessageNumberedTwiceBreaksTheStreamAndLeaksNothing() {
    ClientPipe p = pipe(4);
    answer(0, 1, "b");
    answer(1, 1, "x");
    IOException e = assertThrows(IOException.class, () -> p.read(ByteBuffer.allocate(8)));
    assertTrue(e.getMessage().contains("sent message 1 while 0 was next"), e.getMessage());
    assertFalse(connection.open, "the connection is closed");
    p.close();
    assertEquals(0, pool.outstandingBuffers());
  }

  /**
   * The DataNode's credit can come in a PULL's answer ahead of the ACKs of the DATA messages it
   * consumed (they follow in the same write): until those ACKs come the messages still hold
   * their places in flight, so the stream takes no more DATA than its window has unanswered, and
   * the PULLs going back always find a place (a slow JVM lost a write to "no room for a PULL").
   */
  @Test
  void creditAheadOfTheAcksDoesNotLetMoreThanAWindowBeUnanswered() throws IOException {
    ClientPipe p = pipe(4); // window 4
    for (int i = 0; i < 4; i++) {
      assertEquals(1, p.write(ByteBuffer.wrap(new byte[] {(byte) i})));
    }
    assertFalse(p.writable(), "a window of DATA messages out");
    answer(0, 0, "a", 4); // all four consumed, their ACKs not here yet
    assertFalse(p.writable(), "four DATA messages unanswered: no room for a fifth");
    assertEquals(0, p.write(ByteBuffer.wrap(new byte[] {9})));
    Buffer ack = pool.allocate(TransferWire.ANSWER_HEADER);
    TransferWire.answerHeader(ack.nio(), TransferWire.ACK, -1, 4);
    ack.nio().flip();
    connection.data.get(0).completed(ack);
    assertTrue(p.writable(), "one answered: one more may go");
    assertEquals(1, p.write(ByteBuffer.wrap(new byte[] {9})));
    assertFalse(p.writable());
    connection.open = false;
    p.close();
  }

  /**
   * A DataNode answering a DATA message with fewer bytes than an answer header fails the stream
   * with an IOException saying so (before: an IndexOutOfBoundsException on the transport's
   * thread, and the stream left waiting).
   */
  @Test
  void aShortAnswerToADataMessageFailsTheStreamClearly() throws IOException {
    ClientPipe p = pipe(4);
    assertEquals(1, p.write(ByteBuffer.wrap(new byte[] {1})));
    Buffer shortAck = pool.allocate(4);
    shortAck.nio().putInt(TransferWire.ACK).flip();
    connection.data.get(0).completed(shortAck);
    IOException e = assertThrows(IOException.class,
        () -> p.write(ByteBuffer.wrap(new byte[] {2})));
    assertTrue(e.getMessage().contains("answered a DATA message with 4 bytes"), e.getMessage());
    assertFalse(connection.open, "the connection is closed");
    p.close();
    assertEquals(0, pool.outstandingBuffers(), "the short answer's memory given back");
  }
}
