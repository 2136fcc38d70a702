/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

/**
 * Flow control of one connection: a SEND is posted only while the peer has a receive posted
 * for it. Each side starts with the other's receive depth (connection private data) as
 * credits; every receive this side re-posts is a credit owed to the peer, returned in the next
 * header or in a CREDIT message once {@link #threshold} are owed. The last credit is kept for
 * CREDIT messages, so two busy peers cannot both end up unable to return credits.
 *
 * <p>Credits from the wire are checked: the peer can return at most what this side has spent
 * and not had back ({@link #returned}); a peer announcing a window beyond
 * {@link #MAX_PEER_WINDOW} is refused at set-up ({@link #validWindow}).
 *
 * <p>Event-loop thread only.
 */
final class VerbsCredits {
  /**
   * Largest receive window a peer may announce: ours is at most 32 receives; nothing this
   * protocol produces comes near it.
   */
  static final int MAX_PEER_WINDOW = 4096;
  /** The header's credits field is 16 bits. */
  private static final int MAX_PER_HEADER = 0xffff;

  private int peerWindow;
  private int available;
  private int owed;
  private int threshold = 2;

  /** A window a peer may announce: 1 .. {@link #MAX_PEER_WINDOW}. */
  static boolean validWindow(int credits) {
    return credits > 0 && credits <= MAX_PEER_WINDOW;
  }

  /** The peer's receive depth, from its private data (checked with {@link #validWindow}). */
  void peerWindow(int credits) {
    peerWindow = credits;
    available = credits;
  }

  /**
   * Our receive depth: credits owed before a CREDIT message of its own goes out are half of it,
   * and never 1, or CREDIT messages would answer each other without end (see
   * {@link VerbsRing#MIN_RECV_DEPTH}).
   */
  void ownWindow(int recvDepth) {
    threshold = Math.max(2, recvDepth / 2);
  }

  int threshold() {
    return threshold;
  }

  /** A message other than CREDIT may go: one credit stays for CREDIT messages. */
  boolean canSendMessage() {
    return available >= 2;
  }

  /** A CREDIT message is due and may go. */
  boolean creditMessageDue(boolean messagesWaiting) {
    return owed >= threshold && available >= 1 && (!messagesWaiting || available < 2);
  }

  /** Credits to put in the header of the message being posted. */
  int toReturn() {
    return Math.min(owed, MAX_PER_HEADER);
  }

  /** A message carrying {@code returned} credits was posted. */
  void sent(int returned) {
    owed -= returned;
    available--;
  }

  /** A receive was re-posted: one more credit owed to the peer. */
  void reposted() {
    owed++;
  }

  /**
   * The peer returned {@code credits}; false (nothing changed) when that is more than it can
   * owe, a protocol violation.
   */
  boolean returned(int credits) {
    if (credits > peerWindow - available) {
      return false;
    }
    available += credits;
    return true;
  }

  /** Most the peer can return now: what it has received from us and not yet given back. */
  int outstanding() {
    return peerWindow - available;
  }

  int peerWindow() {
    return peerWindow;
  }
}
