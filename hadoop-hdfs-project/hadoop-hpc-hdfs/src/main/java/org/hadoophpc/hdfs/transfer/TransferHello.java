/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.hadoophpc.net.Buffer;
import org.hadoophpc.net.Connection;
import org.hadoophpc.net.RemoteFailureException;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportTimeoutException;

/**
 * One rule: how a client (a DFSClient, or a DataNode towards its pipeline mirror) opens a
 * transfer stream. It connects (on the opening thread where the transport can, reads then left
 * to callers), says HELLO, reads the DataNode's answer (itself, where it reads the connection)
 * and takes the windows it grants, all within one deadline; a refusal comes back typed
 * ({@link TransferRefusedException}), a HELLO left unanswered as {@link HelloUnanswered}.
 */
final class TransferHello {
  private TransferHello() {
  }

  /**
   * Connects to {@code endpoint} and says HELLO within {@code timeoutMs}.
   *
   * @throws TransferRefusedException when the DataNode answered with a {@link TransferError}
   * @throws IOException when it could not be reached in time
   */
  static ClientPipe open(Transport transport, InetSocketAddress endpoint, int xferPort,
      TransferMetrics.Role role, int timeoutMs, TransferMetrics metrics, TransferConf conf)
      throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
    Connection c;
    if (conf.callerReads) {
      try {
        c = transport.connect(endpoint, timeoutMs); // on this thread where the transport can
      } catch (TransportTimeoutException e) {
        throw new SocketTimeoutException("connect to " + endpoint + " timed out");
      } catch (java.io.InterruptedIOException e) {
        throw e;
      } catch (IOException e) {
        throw new IOException("connect to " + endpoint + " failed: " + e.getMessage(), e);
      }
    } else {
      c = await(transport.connect(endpoint), deadline, "connect to " + endpoint);
    }
    boolean ok = false;
    try {
      // the HELLO's answer read by this thread too, where the transport lets callers read
      boolean callerRead = conf.callerReads && c.leaveReadsToCallers();
      Buffer hello = transport.bufferPool().allocate(TransferWire.HELLO_BYTES);
      if (hello == null) {
        throw new TransferRefusedException(TransferError.BUSY,
            "no registered memory for a HELLO to " + endpoint);
      }
      ByteBuffer b = hello.nio();
      TransferWire.requestHeader(b, TransferWire.HELLO, TransferWire.TAKES_PACKETS, 0);
      b.putInt(TransferWire.MAGIC).putShort(TransferWire.VERSION).put((byte) role.ordinal())
          .putInt(xferPort).flip();
      CompletableFuture<Buffer> f = c.request(hello);
      if (f == null) {
        hello.release();
        throw new TransferRefusedException(TransferError.BUSY, "no room for a HELLO to "
            + endpoint);
      }
      Buffer answer;
      try {
        answer = callerRead ? awaitReading(c, f, deadline, "HELLO to " + endpoint)
            : await(f, deadline, "HELLO to " + endpoint);
      } catch (SocketTimeoutException e) {
        throw new HelloUnanswered(e.getMessage() + " (connected, no answer)");
      } catch (IOException e) {
        if (e.getCause() instanceof RemoteFailureException) {
          RemoteFailureException r = (RemoteFailureException) e.getCause();
          TransferError why = TransferError.of(r.code());
          throw new TransferRefusedException(why == null ? TransferError.PROTOCOL : why,
              endpoint + " refused the transfer stream: " + r.detail());
        }
        throw e;
      }
      ClientPipe p;
      try {
        ByteBuffer a = answer.nio();
        if (a.remaining() < TransferWire.OK_BYTES || a.get(0) != TransferWire.OK) {
          throw new TransferRefusedException(TransferError.NOT_HDFS, endpoint
              + " answered the HELLO with something else than OK");
        }
        int chunk = a.getInt(TransferWire.ANSWER_HEADER);
        int window = a.getInt(TransferWire.ANSWER_HEADER + 4);
        int pulls = a.getInt(TransferWire.ANSWER_HEADER + 8);
        if (chunk < 1 || window < 1 || pulls < 1
            || chunk + TransferWire.REQUEST_HEADER > transport.bufferPool().maxChunk()) {
          throw new TransferRefusedException(TransferError.PROTOCOL, endpoint
              + " offered unusable windows: chunk " + chunk + ", window " + window + ", pulls "
              + pulls);
        }
        int park = conf.pullsToPark(pulls, window);
        if (park < 1) {
          throw new TransferRefusedException(TransferError.PROTOCOL, endpoint + " grants a window"
              + " of " + window + " DATA messages: with a PULL that is more than this client's "
              + TransportConfigKeys.MAX_INFLIGHT_KEY + "=" + conf.maxInflight
              + " requests in flight; raise it (or lower the DataNode's "
              + TransferConfigKeys.WINDOW_KEY + ")");
        }
        p = ClientPipe.started(c, transport.bufferPool(), metrics, chunk, window, park);
      } finally {
        answer.release();
      }
      ok = true;
      return p;
    } finally {
      if (!ok) {
        c.close();
      }
    }
  }

  /** The connection was made but the HELLO got no answer in time. */
  static final class HelloUnanswered extends SocketTimeoutException {
    private static final long serialVersionUID = 1L;

    HelloUnanswered(String message) {
      super(message);
    }
  }

  /**
   * {@link #await} on a connection whose reads are left to callers: this thread reads it (and
   * so completes {@code f} itself) instead of sleeping until another thread does.
   */
  private static <T> T awaitReading(Connection c, CompletableFuture<T> f, long deadline,
      String what) throws IOException {
    while (!f.isDone() && !Thread.currentThread().isInterrupted()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        break;
      }
      long slice = Math.min(left, TimeUnit.MILLISECONDS.toNanos(TransferSelector.POLL_MS));
      if (!c.readOnCaller(slice)) { // the connection closed, or its reads went elsewhere
        try {
          f.get(slice, TimeUnit.NANOSECONDS);
        } catch (TimeoutException | ExecutionException e) {
          // looked at below
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
    }
    return await(f, deadline, what);
  }

  private static <T> T await(CompletableFuture<T> f, long deadline, String what)
      throws IOException {
    try {
      return f.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      f.cancel(false);
      throw new SocketTimeoutException(what + " timed out");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException(what + " interrupted");
    } catch (ExecutionException e) {
      throw new IOException(what + " failed: " + e.getCause().getMessage(), e.getCause());
    }
  }
}
