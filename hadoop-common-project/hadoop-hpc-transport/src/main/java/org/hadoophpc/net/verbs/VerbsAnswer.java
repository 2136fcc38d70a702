/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import org.hadoophpc.net.AnswerSlots;
import org.hadoophpc.net.Buffer;

/**
 * The state of one request received on a {@link VerbsConnection}, reused from request to request
 * (see {@link AnswerSlots}): the requester's id and, once claimed by an answer on any thread,
 * that answer on its way to the event loop through the connection's outbox. The loop turns it
 * into a message and recycles the slot.
 */
final class VerbsAnswer extends AnswerSlots.Slot {
  /** The requester's request id, echoed in the answer. */
  int reqId;
  /** The response (owned from the claim on), or null for a failure. */
  Buffer response;
  /** The failure text when {@link #response} is null. */
  String failure;
  /** The failure's code (RemoteFailureException) when {@link #response} is null. */
  int failureCode;

  VerbsAnswer(int index) {
    super(index);
  }
}
