/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One rule: nothing a peer sends is used before it is checked. Received lengths against the
 * header, returned credits against what the peer can owe, rendezvous lengths against
 * {@code max.message.size} and their addresses against null and wrapping, revocations against
 * {@link VerbsConnection#MAX_REVOKED}; a peer breaking a rule is closed with one WARN line
 * naming it ({@link VerbsConnection#protocolError}), the other connections go on. This is one
 * connection's handling of receive completions: the checks, then dispatch by message type.
 *
 * <p>Belongs to the transport's event loop, as its connection does.
 */
final class VerbsInbound {
  /** The connection's logger: the lines are the connection's. */
  private static final Logger LOG = LoggerFactory.getLogger(VerbsConnection.class);
  private final VerbsConnection conn;
  /** rdma_notify was called (a message before our ESTABLISHED event, passive side). */
  private boolean notified;
  /** Where the messages are, header and payload. */
  private final VerbsRing ring;
  /** Credits the peer returns are checked against what it can owe. */
  private final VerbsCredits credits;
  private final VerbsRendezvous rendezvous;
  private final VerbsTransport transport;
  private final int maxMessageSize;
  /**
   * Keys of the peer's regions it unexposed, so later operations on them fail here instead of
   * as a remote access error that would take the queue pair down (the peer deregisters the
   * region, so the hardware refuses them as well). At most
   * {@link VerbsConnection#MAX_REVOKED}: a peer revoking more is closed.
   */
  private final Set<Long> revoked = new HashSet<>();

  VerbsInbound(VerbsConnection conn, VerbsRing ring, VerbsCredits credits,
      VerbsRendezvous rendezvous) {
    this.conn = conn;
    this.ring = ring;
    this.credits = credits;
    this.rendezvous = rendezvous;
    this.transport = conn.transport();
    this.maxMessageSize = transport.conf().maxMessageSize();
  }

  /** The peer unexposed the region of {@code key}. */
  boolean revoked(long key) {
    return revoked.contains(key);
  }

  /** The receive of slot {@code slot} completed. */
  void onReceive(int slot, int status, int byteLen, int vendorStatus) {
    if (!ring.completed(slot)) {
      return;
    }
    if (status != VerbsNatives.WC_SUCCESS) {
      conn.closeConnection(conn.completionError(status, vendorStatus));
      return;
    }
    if (conn.state == VerbsConnection.CLOSING || conn.state == VerbsConnection.CLOSED) {
      return; // arrived while closing: nothing of it is used
    }
    // CONNECTING too: the peer may send as soon as it is established, and its first message
    // can complete here before our own ESTABLISHED event is read. Until that event our answers
    // wait (the queue pair cannot send yet); should the peer's RTU have been lost (a UD MAD:
    // under load Soft-RoCE drops them) the event would only come with a retransmitted REP, so
    // the passive side tells the CM that the connection carries traffic (rdma_notify).
    if (conn.state == VerbsConnection.CONNECTING && conn.listener() != null && !notified) {
      notified = true;
      int rc = VerbsNatives.notifyEstablished(conn.cmId);
      LOG.debug("verbs: first message from {} before ESTABLISHED; rdma_notify: {}",
          conn.remoteAddress(), rc);
    }
    ByteBuffer headers = ring.headers(slot);
    int at = VerbsRing.headerAt(slot);
    byte type = VerbsHeader.type(headers, at);
    int reqId = VerbsHeader.reqId(headers, at);
    if (byteLen < VerbsHeader.BYTES || byteLen > VerbsHeader.BYTES + VerbsTransport.EAGER_SIZE) {
      conn.protocolError("a message of " + byteLen + " bytes (" + VerbsHeader.BYTES + " .. "
          + (VerbsHeader.BYTES + VerbsTransport.EAGER_SIZE) + " allowed)");
      return;
    }
    int returned = VerbsHeader.credits(headers, at);
    if (!credits.returned(returned)) {
      conn.protocolError("it returned " + returned + " credits while it could owe at most "
          + credits.outstanding() + " (receive window " + credits.peerWindow() + ")");
      return;
    }

    String refused = conn.admission.admit(type, VerbsHeader.length(headers, at));
    if (refused != null) {
      conn.protocolError(refused);
      return;
    }

    switch (type) {
      case VerbsHeader.REQUEST:
      case VerbsHeader.RESPONSE:
      case VerbsHeader.FAILURE:
        // The received length is kept in the (local, unused) reserved field of the header slot.
        headers.putInt(at + 24, byteLen - VerbsHeader.BYTES);
        if (!conn.deliverEager(slot)) {
          ring.hold(slot);
        }
        conn.pump();
        return;
      case VerbsHeader.REQUEST_RNDV:
      case VerbsHeader.RESPONSE_RNDV: {
        int length = VerbsHeader.length(headers, at);
        if (length <= 0 || length > maxMessageSize) {
          conn.protocolError("a rendezvous of " + length + " bytes (1 .. hadoop.hpc.transport."
              + "max.message.size=" + maxMessageSize + " allowed)");
          return;
        }
        long address = VerbsHeader.address(headers, at);
        if (address == 0 || VerbsConnection.wraps(address, length)) {
          conn.protocolError("a rendezvous of " + length + " bytes at 0x"
              + Long.toUnsignedString(address, 16) + " (null or wrapping around)");
          return;
        }
        VerbsConnection.RendezvousTap t = conn.tap;
        if (t != null && !t.announced(type == VerbsHeader.RESPONSE_RNDV, reqId, length,
            VerbsHeader.rkey(headers, at), VerbsHeader.address(headers, at))) {
          break; // the test plays a peer that never reads
        }
        rendezvous.announced(type == VerbsHeader.RESPONSE_RNDV, reqId, length,
            VerbsHeader.rkey(headers, at), VerbsHeader.address(headers, at));
        break;
      }
      case VerbsHeader.RNDV_DONE:
        rendezvous.onDone(VerbsHeader.flags(headers, at) == 1, reqId);
        break;
      case VerbsHeader.CREDIT:
        break;
      case VerbsHeader.REVOKE: {
        long key = VerbsHeader.address(headers, at);
        if (!revoked.contains(key) && revoked.size() >= VerbsConnection.MAX_REVOKED) {
          conn.protocolError("it revoked more than " + VerbsConnection.MAX_REVOKED
              + " regions on one connection");
          return;
        }
        revoked.add(key);
        VerbsOp ack = conn.ops.message(VerbsHeader.REVOKE_ACK, 0, 0, null);
        ack.address = key;
        conn.queueMessage(ack);
        break;
      }
      case VerbsHeader.REVOKE_ACK:
        if (!conn.revokeConfirmed(VerbsHeader.address(headers, at))) {
          conn.protocolError("it confirmed a revocation it was not asked for");
          return;
        }
        break;
      default:
        conn.protocolError("unknown message type " + type);
        return;
    }
    conn.repost(slot);
    conn.pump();
  }
}
