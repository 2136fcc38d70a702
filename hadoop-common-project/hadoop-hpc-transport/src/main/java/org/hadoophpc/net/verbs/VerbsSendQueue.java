/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.net.verbs;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.ConnectionClosedException;
import org.hadoophpc.net.TransportException;

/**
 * One rule: a work request is posted only into a free send-queue slot, and a message only with
 * one of the peer's credits; each slot comes back once, at its completion or at teardown. This
 * is one connection's send side: the backlogs of messages and RDMA work requests, posting each
 * kind (message, window bind, local invalidate, RDMA read or write), and its completions.
 *
 * <p>Flow control ({@link VerbsCredits}): each side pre-posts its receives and tells the peer
 * that number in the connection's private data; a message takes one of the peer's credits, and
 * credits come back on the peer's messages, or in a CREDIT message when enough are owed.
 *
 * <p>Belongs to the transport's event loop, as its connection does.
 */
final class VerbsSendQueue {
  /** In a work request id: a receive (else a send-queue slot). */
  static final long RECV_FLAG = 0x8000_0000L;

  private final VerbsConnection conn;
  private final VerbsTransport transport;
  private final VerbsCredits credits;
  private final VerbsRing ring;
  private final VerbsRendezvous rendezvous;
  /** The connection's messages to send, in order (shared: it queues them). */
  private final ArrayDeque<VerbsOp> messageBacklog;
  private final ArrayDeque<VerbsOp> rdmaBacklog = new ArrayDeque<>();
  /** Posted as often as needed: a CREDIT message carries nothing of its own. */
  private final VerbsOp creditMessage = VerbsOp.control(VerbsHeader.CREDIT, 0);
  /** Stands in the send queue for window binds (their completions need no object). */
  private final VerbsOp bindMarker = new VerbsOp(VerbsOp.BIND);
  private final VerbsOp[] sendOps;
  private final int[] freeSend;
  private int freeSendTop;
  /** Chosen when the queue pair is set up; 0 before. */
  private int depth;
  /** Header slots of sends follow the receives' in the ring. */
  private int recvDepth;
  private int posted;

  VerbsSendQueue(VerbsConnection conn, VerbsTransport transport, VerbsCredits credits,
      VerbsRing ring, VerbsRendezvous rendezvous, ArrayDeque<VerbsOp> messageBacklog,
      int maxSend) {
    this.conn = conn;
    this.transport = transport;
    this.credits = credits;
    this.ring = ring;
    this.rendezvous = rendezvous;
    this.messageBacklog = messageBacklog;
    this.sendOps = new VerbsOp[maxSend];
    this.freeSend = new int[maxSend];
  }

  /** The queue pair is being set up with {@code depth} sends after {@code recvDepth} receives. */
  void init(int recvDepth, int depth) {
    this.recvDepth = recvDepth;
    this.depth = depth;
    for (int i = 0; i < depth; i++) {
      freeSend[i] = depth - 1 - i;
    }
    freeSendTop = depth;
  }

  /** Work requests posted here and not completed yet. */
  int posted() {
    return posted;
  }

  static long wrId(int connId, int slot, boolean recv) {
    return ((long) connId << 32) | (recv ? RECV_FLAG : 0L) | slot;
  }

  /** Queues an RDMA work request (posted as send-queue slots allow). */
  void queueRdma(VerbsOp op) {
    rdmaBacklog.add(op);
  }

  /** Takes a queued, not yet posted, RDMA work request back; false when it is not queued. */
  boolean unqueueRdma(VerbsOp op) {
    return rdmaBacklog.remove(op);
  }

  /** Posts what credits and send-queue slots allow; returns credits when owed. */
  void pump() {
    while (!rdmaBacklog.isEmpty() && freeSendTop > 0) {
      VerbsOp op = rdmaBacklog.poll();
      if (op.isUser() && op.isDone()) {
        continue; // timed out while queued
      }
      if (!postRdma(op)) {
        return;
      }
    }
    while (!messageBacklog.isEmpty() && freeSendTop > 1 && credits.canSendMessage()) {
      if (!postMessage(messageBacklog.poll())) {
        return;
      }
    }
    if (freeSendTop > 0 && credits.creditMessageDue(!messageBacklog.isEmpty())) {
      postMessage(creditMessage);
    }
  }

  private boolean postMessage(VerbsOp op) {
    if (op.window != null && !bindWindow(op)) {
      return false;
    }
    int slot = freeSend[--freeSendTop];
    int header = recvDepth + slot;
    int returned = op.rawCredits >= 0 ? op.rawCredits : credits.toReturn();
    VerbsHeader.write(ring.headers(header), VerbsRing.headerAt(header), op.type,
        op.flags, returned, op.reqId, op.length, op.rkey, op.address);
    long addr = 0;
    int len = 0;
    int lkey = 0;
    if (op.payload != null && op.payload.readableBytes() > 0) {
      VerbsTransport.MrInfo mr = transport.mr(op.payload);
      addr = mr.addr() + op.payload.slabOffset() + op.payload.nio().position();
      len = op.payload.readableBytes();
      lkey = mr.lkey();
    }
    int rc = VerbsNatives.postSend(conn.cmId, wrId(conn.connId, slot, false),
        ring.headerAddress(header), VerbsHeader.BYTES, ring.headerLkey(header), addr, len,
        lkey);
    if (rc != 0) {
      freeSend[freeSendTop++] = slot;
      messageOver(op);
      conn.closeConnection(new ConnectionClosedException("verbs connection to "
          + conn.remoteAddress() + ": ibv_post_send failed: errno " + -rc));
      return false;
    }
    credits.sent(op.rawCredits >= 0 ? 0 : returned);
    sendOps[slot] = op;
    posted++;
    return true;
  }

  /**
   * Binds the window of a rendezvous announcement to exactly its payload (remote read only),
   * ahead of the announcement in the same send queue, and puts the new key in the message.
   */
  private boolean bindWindow(VerbsOp op) {
    VerbsWindows.Window w = op.window;
    op.window = null;
    int slot = freeSend[--freeSendTop];
    VerbsTransport.MrInfo mr = transport.mr(w.payload);
    long rkey = VerbsNatives.postBind(conn.cmId, wrId(conn.connId, slot, false), w.handle,
        mr.handle(), op.address, op.length, VerbsNatives.ACCESS_REMOTE_READ);
    if (rkey < 0) {
      freeSend[freeSendTop++] = slot;
      messageOver(op);
      conn.closeConnection(new ConnectionClosedException("verbs connection to "
          + conn.remoteAddress() + ": binding a memory window failed: errno " + -rkey));
      return false;
    }
    w.rkey = (int) rkey;
    op.rkey = (int) rkey;
    sendOps[slot] = bindMarker;
    posted++;
    return true;
  }

  private boolean postLocalInvalidate(VerbsOp op) {
    int slot = freeSend[--freeSendTop];
    int rc = VerbsNatives.postLocalInv(conn.cmId, wrId(conn.connId, slot, false),
        op.window.rkey);
    if (rc != 0) {
      freeSend[freeSendTop++] = slot;
      conn.ops.recycle(op);
      conn.closeConnection(new ConnectionClosedException("verbs connection to "
          + conn.remoteAddress() + ": invalidating a memory window failed: errno " + -rc));
      return false;
    }
    sendOps[slot] = op;
    posted++;
    return true;
  }

  private boolean postRdma(VerbsOp op) {
    if (op.kind == VerbsOp.LOCAL_INV) {
      return postLocalInvalidate(op);
    }
    int slot = freeSend[--freeSendTop];
    VerbsTransport.MrInfo mr = transport.mr(op.local);
    long addr = mr.addr() + op.local.slabOffset() + op.localPosition;
    boolean read = op.kind != VerbsOp.USER_WRITE;
    int rc = VerbsNatives.postRdma(conn.cmId, wrId(conn.connId, slot, false), read, addr,
        op.length, mr.lkey(), op.remoteAddress, op.remoteKey);
    if (rc != 0) {
      freeSend[freeSendTop++] = slot;
      ConnectionClosedException e = new ConnectionClosedException("verbs connection to "
          + conn.remoteAddress() + ": ibv_post_send failed: errno " + -rc);
      conn.failRdma(op, e);
      conn.closeConnection(e);
      return false;
    }
    sendOps[slot] = op;
    posted++;
    return true;
  }

  /** A work request of send-queue slot {@code slot} completed. */
  void onCompletion(int slot, int status, int vendorStatus) {
    if (slot >= depth || sendOps[slot] == null) {
      return;
    }
    VerbsOp op = sendOps[slot];
    sendOps[slot] = null;
    freeSend[freeSendTop++] = slot;
    posted--;
    if (status != VerbsNatives.WC_SUCCESS) {
      TransportException cause = conn.completionError(status, vendorStatus);
      if (op.kind == VerbsOp.MESSAGE || op.kind == VerbsOp.REQUEST) {
        messageOver(op);
      } else if (op.kind != VerbsOp.BIND && op.kind != VerbsOp.LOCAL_INV) {
        conn.failRdma(op, cause);
      } else if (op.kind == VerbsOp.LOCAL_INV) {
        conn.ops.recycle(op); // the window keeps its payload until windows.destroy() in finish()
      }
      conn.closeConnection(cause);
      return;
    }
    switch (op.kind) {
      case VerbsOp.BIND:
        break;
      case VerbsOp.LOCAL_INV:
        rendezvous.invalidated(op.window);
        conn.ops.recycle(op);
        break;
      case VerbsOp.MESSAGE:
      case VerbsOp.REQUEST:
        transport.metrics().sent(VerbsHeader.BYTES
            + (op.payload == null ? 0L : op.payload.readableBytes()));
        messageOver(op);
        break;
      case VerbsOp.USER_READ:
        transport.metrics().rdmaRead(op.length);
        op.local.nio().position(op.localPosition + op.length);
        conn.finishOp(op, null, null);
        break;
      case VerbsOp.USER_WRITE:
        transport.metrics().rdmaWritten(op.length);
        conn.finishOp(op, null, null);
        break;
      case VerbsOp.RNDV_READ:
        transport.metrics().rdmaRead(op.length);
        rendezvous.onRead(op);
        break;
      default:
        throw new IllegalStateException("unknown verbs op kind " + op.kind);
    }
    conn.pump();
  }

  /**
   * A message was sent, or will not be: its eager payload is released, and the object goes
   * back to its pool unless something else still holds it (the shared CREDIT message; a
   * request still waiting for its response).
   */
  void messageOver(VerbsOp op) {
    Buffer p = op.payload;
    op.payload = null;
    if (p != null) {
      p.release();
    }
    if (op.kind == VerbsOp.REQUEST) {
      op.messageLive = false;
      if (op.isDone()) {
        conn.ops.recycleRequest(op);
      }
    } else if (op != creditMessage) {
      conn.ops.recycle(op);
    }
  }

  /** Releases and fails what was never posted. */
  void dropBacklogs(TransportException closed) {
    VerbsOp op;
    while ((op = messageBacklog.poll()) != null) {
      messageOver(op);
    }
    while ((op = rdmaBacklog.poll()) != null) {
      conn.failRdma(op, closed);
    }
  }

  /** The queue pair is gone: what it held posted is over (messages) or failed. */
  void finish(TransportException closed) {
    List<VerbsOp> over = new ArrayList<>();
    for (int i = 0; i < depth; i++) {
      if (sendOps[i] != null) {
        over.add(sendOps[i]);
        sendOps[i] = null;
      }
    }
    for (VerbsOp op : over) {
      if (op.kind == VerbsOp.MESSAGE || op.kind == VerbsOp.REQUEST) {
        messageOver(op);
      } else if (op.kind != VerbsOp.BIND) {
        conn.failRdma(op, closed);
      }
    }
    posted = 0;
  }
}
