/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.tcp;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;

import org.hadoophpc.net.AnswerSlots;
import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Completion;
import org.hadoophpc.net.FileSpan;
import org.hadoophpc.net.ConnectionClosedException;

/**
 * The state of one received request, reused from request to request (see {@link AnswerSlots}):
 * the peer's operation id and, once answered, the frame carrying the answer. Armed and recycled
 * on the connection's event-loop thread; {@link #answer} runs on the answering thread right
 * after it claimed the request, the frame methods on the event-loop thread.
 */
final class TcpResponder extends AnswerSlots.Slot implements OutboundFrame {
  private final TcpConnection connection;
  /** The requester's operation id, echoed in the answer. */
  long opId;
  private Buffer response;
  private ByteBuffer errorText;
  private int errorCode;
  private FileChannel file;
  private long filePosition;
  private int fileLeft;
  /** Told when the file is no longer needed (may be null). */
  private Completion<Void> fileDone;
  /** Spans sent after {@link #file}'s (null for a one-file answer); the next is at moreIndex. */
  private FileSpan[] more;
  private int moreIndex;
  /** All file bytes of the answer (fileLeft counts down the current span only). */
  private int fileTotal;

  TcpResponder(TcpConnection connection, int index) {
    super(index);
    this.connection = connection;
  }

  /** Fills the answer: a response (owned from now on), or an error's code and text. */
  void answer(Buffer buffer, int code, ByteBuffer error) {
    this.response = buffer;
    this.errorCode = code;
    this.errorText = error;
  }

  /**
   * Fills the answer with {@code head} (owned from now on; may be null) and a file region, sent
   * by {@link #transferRest} after them; {@code done} (may be null) is told when the file is no
   * longer needed.
   */
  void answerFile(Buffer head, FileChannel channel, long position, int length,
      Completion<Void> done) {
    this.response = head;
    this.file = channel;
    this.filePosition = position;
    this.fileLeft = length;
    this.fileTotal = length;
    this.fileDone = done;
  }

  /** Fills the answer with {@code spans}' bytes, {@code total} in all, one after the other. */
  void answerFiles(FileSpan[] spans, int total) {
    this.response = null;
    this.file = spans[0].file();
    this.filePosition = spans[0].position();
    this.fileLeft = spans[0].length();
    this.fileTotal = total;
    this.more = spans;
    this.moreIndex = 1;
    this.fileDone = null;
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    if (file != null) {
      int headBytes = response == null ? 0 : response.readableBytes();
      TcpFrame.encode(header, TcpFrame.RESPONSE, headBytes + fileTotal, opId, 0, 0, 0);
      return response == null ? null : response.nio();
    }
    if (response != null) {
      TcpFrame.encode(header, TcpFrame.RESPONSE, response.readableBytes(), opId, 0, 0, 0);
      return response.nio();
    }
    TcpFrame.encodeError(header, errorText.remaining(), opId, errorCode);
    return errorText;
  }

  @Override
  public boolean followsFromFile() {
    return file != null;
  }

  @Override
  public boolean transferRest(WritableByteChannel out) throws IOException {
    while (true) {
      if (fileLeft == 0) {
        if (more == null || moreIndex == more.length) {
          return true;
        }
        FileSpan next = more[moreIndex++];
        file = next.file();
        filePosition = next.position();
        fileLeft = next.length();
        continue;
      }
      long n = file.transferTo(filePosition, fileLeft, out);
      if (n <= 0) {
        if (filePosition >= file.size()) {
          throw new EOFException("file answer ends at byte " + filePosition + " with "
              + fileLeft + " bytes still promised");
        }
        return false; // the socket is full
      }
      filePosition += n;
      fileLeft -= n;
    }
  }

  @Override
  public void sent() {
    finish(null);
  }

  @Override
  public void dropped() {
    finish(new ConnectionClosedException("the answer to operation " + opId
        + " was not sent: the connection closed"));
  }

  private void finish(ConnectionClosedException notSent) {
    Buffer b = response;
    Completion<Void> done = fileDone;
    response = null;
    errorText = null;
    file = null;
    fileLeft = 0;
    fileTotal = 0;
    more = null;
    moreIndex = 0;
    fileDone = null;
    if (b != null) {
      b.release();
    }
    connection.answerGone(this);
    if (done != null) {
      connection.fileDone(done, notSent);
    }
  }

  @Override
  public boolean obsolete() {
    return false;
  }
}
