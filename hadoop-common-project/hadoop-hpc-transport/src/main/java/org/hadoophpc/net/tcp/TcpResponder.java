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

  /** Fills the answer with a file region, sent by {@link #transferRest} after the header. */
  void answerFile(FileChannel channel, long position, int length) {
    this.file = channel;
    this.filePosition = position;
    this.fileLeft = length;
  }

  @Override
  public ByteBuffer start(ByteBuffer header) {
    if (file != null) {
      TcpFrame.encode(header, TcpFrame.RESPONSE, fileLeft, opId, 0, 0, 0);
      return null;
    }
    if (response != null) {
      TcpFrame.encode(header, TcpFrame.RESPONSE, response.readableBytes(), opId, 0, 0, 0);
      return response.nio();
    }
    TcpFrame.encodeError(header, errorText.remaining(), opId, errorCode);
    return errorText;
  }

  @Override
  public boolean transferRest(WritableByteChannel out) throws IOException {
    while (fileLeft > 0) {
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
    return true;
  }

  @Override
  public void sent() {
    dropped();
  }

  @Override
  public void dropped() {
    Buffer b = response;
    response = null;
    errorText = null;
    file = null;
    fileLeft = 0;
    if (b != null) {
      b.release();
    }
    connection.answerGone(this);
  }

  @Override
  public boolean obsolete() {
    return false;
  }
}
