/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.net.Peer;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.net.SocketInputStream;
import org.hadoophpc.net.Listener;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The transfer stream under Hadoop's own stream classes, over the tcp transport: a client
 * {@link TransferSocket} through {@code NetUtils}' stock {@code SocketInputStream} /
 * {@code SocketOutputStream}, the DataNode's {@link TransferPeer} from a
 * {@link TransferPeerServer}. What DataStreamer, BlockReaderRemote and DataXceiver rely on.
 */
class TransferStreamTest {
  private static final int IO_TIMEOUT_MS = 900;

  private DataNodeEndpoint endpoint;
  private Transport clientTransport;
  private TransferClient client;
  private InetSocketAddress at;
  private final TransferMetrics serverMetrics = TransferMetrics.of("stream-test-server");

  @BeforeEach
  void setUp() throws IOException {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.hpc.transport", "tcp");
    conf.set("hadoop.hpc.transport.io.timeout", IO_TIMEOUT_MS + "ms");
    conf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
    TransferConf tc = TransferConf.from(conf);
    endpoint = new DataNodeEndpoint(conf, serverMetrics);
    at = endpoint.address();
    clientTransport = TransportFactory.create(conf);
    client = new TransferClient(tc, clientTransport, null, TransferMetrics.of("stream-test"),
        TransferMetrics.Role.CLIENT);
  }

  @AfterEach
  void tearDown() throws IOException {
    endpoint.close();
    clientTransport.close();
  }

  private Socket connect() throws IOException {
    Socket s = new RdmaSocketFactory(client).createSocket();
    NetUtils.connect(s, at, 5000);
    return s;
  }

  private Peer accept() throws IOException {
    Peer p = endpoint.peers.accept();
    p.setReadTimeout(10_000); // as DataXceiver does: no wait here is unbounded
    p.setWriteTimeout(10_000);
    return p;
  }

  @Test
  void bytesCrossBothWaysUnchangedThroughHadoopsStreams() throws Exception {
    byte[] up = new byte[3 * 1024 * 1024 + 17];
    byte[] down = new byte[2 * 1024 * 1024 + 5];
    new Random(1).nextBytes(up);
    new Random(2).nextBytes(down);
    try (Socket s = connect()) {
      assertTrue(s.getChannel() instanceof TransferChannel, "stream over the transport");
      Peer p = accept();
      OutputStream out = NetUtils.getOutputStream(s, 5000);
      InputStream in = NetUtils.getInputStream(s, 5000);
      CompletableFuture<byte[]> got = CompletableFuture.supplyAsync(() -> {
        try {
          byte[] b = new byte[up.length];
          new DataInputStream(p.getInputStream()).readFully(b);
          p.getOutputStream().write(down);
          return b;
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      for (int off = 0; off < up.length; off += 65536) {
        out.write(up, off, Math.min(65536, up.length - off));
      }
      byte[] back = new byte[down.length];
      new DataInputStream(in).readFully(back);
      assertArrayEquals(up, got.get(30, TimeUnit.SECONDS));
      assertArrayEquals(down, back);
      p.close();
      assertEquals(-1, in.read(), "the DataNode closed: end of stream after its bytes");
    }
  }

  @Test
  void aBlockFileIsSentStraightFromTheFile(@TempDir File dir) throws Exception {
    byte[] data = new byte[5 * 128 * 1024 + 333];
    new Random(3).nextBytes(data);
    File f = new File(dir, "blk");
    Files.write(f.toPath(), data);
    try (Socket s = connect(); RandomAccessFile raf = new RandomAccessFile(f, "r")) {
      Peer p = accept();
      FileChannel ch = raf.getChannel();
      CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
        try {
          TransferOutputStream out = (TransferOutputStream) p.getOutputStream();
          out.transferToFully(ch, 100, data.length - 100);
          out.flush(); // as BlockSender does after a block's packets
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      byte[] back = new byte[data.length - 100];
      ByteBuffer direct = ByteBuffer.allocateDirect(back.length);
      SocketInputStream in = new SocketInputStream(s.getChannel(), 5000); // as NioInetPeer
      while (direct.hasRemaining()) {
        assertTrue(in.read(direct) >= 0);
      }
      direct.flip().get(back);
      sent.get(30, TimeUnit.SECONDS);
      byte[] want = new byte[back.length];
      System.arraycopy(data, 100, want, 0, want.length);
      assertArrayEquals(want, back);
    }
  }

  /**
   * BlockSender's pattern: per packet a small write (header and checksums) then
   * transferToFully, the last packet empty, then flush and the block file closed at once. The
   * client reads exactly those bytes in order (each header goes in front of its data in one
   * message), and the flush waited until the transport no longer needed the file (a file
   * closed under a queued sendfile would break the stream).
   */
  @Test
  void blockSendersPacketsArriveInOrderAndTheFileIsFreeAfterFlush(@TempDir File dir)
      throws Exception {
    byte[] data = new byte[3 * 65536 + 100];
    new Random(4).nextBytes(data);
    File f = new File(dir, "blk_2");
    Files.write(f.toPath(), data);
    byte[][] headers = new byte[4][];
    for (int i = 0; i < headers.length; i++) {
      headers[i] = new byte[33 + i * 100];
      new Random(10 + i).nextBytes(headers[i]);
    }
    java.io.ByteArrayOutputStream want = new java.io.ByteArrayOutputStream();
    int[] lengths = {65536, 65536, 65536 + 100, 0};
    try (Socket s = connect()) {
      Peer p = accept();
      RandomAccessFile raf = new RandomAccessFile(f, "r");
      FileChannel ch = raf.getChannel();
      long at = 0;
      for (int i = 0; i < headers.length; i++) {
        want.write(headers[i]);
        want.write(data, (int) at, lengths[i]);
        at += lengths[i];
      }
      CompletableFuture<Void> sent = CompletableFuture.runAsync(() -> {
        try {
          TransferOutputStream out = (TransferOutputStream) p.getOutputStream();
          long pos = 0;
          for (int i = 0; i < headers.length; i++) {
            out.write(headers[i]);
            out.transferToFully(ch, pos, lengths[i], null, null);
            pos += lengths[i];
          }
          out.flush();
          raf.close(); // as BlockSender.close() right after its flush
        } catch (IOException e) {
          throw new RuntimeException(e);
        }
      });
      byte[] back = new byte[want.size()];
      new DataInputStream(NetUtils.getInputStream(s, 10_000)).readFully(back);
      sent.get(30, TimeUnit.SECONDS);
      assertArrayEquals(want.toByteArray(), back);
      // the stream still works after the file was closed
      p.getOutputStream().write(7);
      p.getOutputStream().flush();
      assertEquals(7, NetUtils.getInputStream(s, 10_000).read());
    }
  }

  /** With its accept queue full the DataNode refuses a stream as BUSY before allocating it. */
  @Test
  void aFullAcceptQueueRefusesNewStreamsAsBusy() throws Exception {
    java.util.List<Socket> open = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) { // the queue of 4 (setUp), none accepted
        open.add(connect());
      }
      Socket s = new RdmaSocketFactory(client).createSocket();
      ConnectException e = assertThrows(ConnectException.class,
          () -> NetUtils.connect(s, at, 5000));
      assertTrue(e.getMessage().contains("BUSY") || e.getMessage().contains("accept queue"),
          e.getMessage());
      assertTrue(e.getMessage().contains(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY),
          e.getMessage());
    } finally {
      for (Socket s : open) {
        s.close();
      }
    }
  }

  /**
   * A client that may use TCP, refused as BUSY (the accept queue full), reaches the DataNode
   * over TCP instead, counts the fallback with its reason, and sends the next streams to that
   * DataNode over TCP for a while.
   */
  @Test
  void aClientThatMayUseTcpGoesOverTcpWhenRefusedAsBusy() throws Exception {
    Configuration lenient = new Configuration(false);
    lenient.set("hadoop.hpc.transport", "tcp");
    lenient.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, false);
    TransferMetrics metrics = TransferMetrics.of("stream-test-lenient");
    TransferClient c = new TransferClient(TransferConf.from(lenient), clientTransport, null,
        metrics, TransferMetrics.Role.CLIENT);
    java.util.List<Socket> open = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 4; i++) { // the queue of 4 (setUp), none accepted
        open.add(connect());
      }
      try (Socket s = new RdmaSocketFactory(c).createSocket()) {
        NetUtils.connect(s, at, 5000);
        assertTrue(s.isConnected());
        assertFalse(((TransferSocket) s).overTransport(), "over TCP");
      }
      assertEquals(1, metrics.fallbacks(TransferMetrics.Fallback.BUSY), metrics.toString());
      assertEquals(TransferMetrics.Fallback.NEGATIVE_CACHED, c.precheck(at, false));
    } finally {
      for (Socket s : open) {
        s.close();
      }
    }
  }

  /**
   * Idle streams hold no registered memory on either side (a DataNode may keep thousands of
   * cached client peers): 300 streams, each after one exchange, leave both transports' pools
   * with nothing in use (parked PULLs are ids, not buffers).
   */
  @Test
  void idleStreamsHoldNoRegisteredMemory() throws Exception {
    java.util.List<Socket> sockets = new java.util.ArrayList<>();
    java.util.List<Peer> accepted = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 300; i++) {
        Socket s = connect();
        Peer p = accept();
        sockets.add(s);
        accepted.add(p);
        NetUtils.getOutputStream(s, 5000).write(i & 0x7f);
        assertEquals(i & 0x7f, p.getInputStream().read());
        p.getOutputStream().write(1);
        p.getOutputStream().flush();
        assertEquals(1, NetUtils.getInputStream(s, 5000).read());
      }
      waitUntil(() -> endpoint.transport.registeredMemory().usedBytes() == 0
          && clientTransport.registeredMemory().usedBytes() == 0,
          () -> "in use with 300 idle streams: DataNode " + endpoint.transport.registeredMemory()
              + ", client " + clientTransport.registeredMemory());
    } finally {
      for (Socket s : sockets) {
        s.close();
      }
      for (Peer p : accepted) {
        p.close();
      }
    }
  }

  private static void waitUntil(java.util.function.BooleanSupplier ok,
      java.util.function.Supplier<String> why) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!ok.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        throw new AssertionError(why.get());
      }
      sleep(20);
    }
  }

  /**
   * A HELLO that gets no answer (seen over rxe0: the DataNode never saw it) is tried once more
   * on a new connection, counted, and the stream works.
   */
  @Test
  void anUnansweredHelloIsTriedOnceMoreOnANewConnection() throws Exception {
    java.util.concurrent.atomic.AtomicBoolean lost = new java.util.concurrent.atomic.AtomicBoolean();
    org.hadoophpc.net.RequestHandler losesFirst = new org.hadoophpc.net.RequestHandler() {
      @Override
      public void onRequest(org.hadoophpc.net.Connection c, org.hadoophpc.net.Buffer request,
          Responder responder) {
        throw new IllegalStateException("answered by id");
      }

      @Override
      public void onRequest(org.hadoophpc.net.Connection c, org.hadoophpc.net.Buffer request,
          long requestId) {
        if (lost.compareAndSet(false, true)) {
          request.release(); // as if it never arrived
          return;
        }
        endpoint.handler.onRequest(c, request, requestId);
      }

      @Override
      public void onClose(org.hadoophpc.net.Connection c) {
        endpoint.handler.onClose(c);
      }
    };
    Configuration conf = new Configuration(false);
    conf.set("hadoop.hpc.transport", "tcp");
    conf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
    conf.set(TransferConfigKeys.CONNECT_TIMEOUT_KEY, "500ms");
    TransferMetrics metrics = TransferMetrics.of("stream-test-retry");
    TransferClient quick = new TransferClient(TransferConf.from(conf), clientTransport, null,
        metrics, TransferMetrics.Role.CLIENT);
    try (Listener flaky = endpoint.transport.listen(new InetSocketAddress("127.0.0.1", 0),
        losesFirst)) {
      Socket s = new RdmaSocketFactory(quick).createSocket();
      NetUtils.connect(s, flaky.address(), 5000);
      try {
        Peer p = accept();
        NetUtils.getOutputStream(s, 5000).write(42);
        assertEquals(42, p.getInputStream().read());
        assertEquals(1, metrics.helloRetries(), metrics.toString());
        assertEquals(0, metrics.fallbacks(), metrics.toString());
      } finally {
        s.close();
      }
    }
  }

  @Test
  void readTimeoutIsHadoopsSocketTimeout() throws Exception {
    try (Socket s = connect()) {
      accept();
      InputStream in = NetUtils.getInputStream(s, 300);
      assertThrows(SocketTimeoutException.class, in::read);
    }
  }

  @Test
  void anIdleStreamOutlivesTheTransportsIoTimeout() throws Exception {
    try (Socket s = connect()) {
      Peer p = accept();
      Thread.sleep(3L * IO_TIMEOUT_MS); // parked PULLs are answered and re-posted meanwhile
      assertTrue(s.getChannel().isOpen());
      p.getOutputStream().write(new byte[] {7, 8, 9});
      InputStream in = NetUtils.getInputStream(s, 5000);
      assertEquals(7, in.read());
      NetUtils.getOutputStream(s, 5000).write(42);
      assertEquals(42, p.getInputStream().read());
    }
  }

  /**
   * Small writes (a pipeline's acks) do not wait for the client's PULLs: a DataNode writes many
   * more of them than the client has PULLs parked while the client reads nothing, within a
   * write timeout that a wait would exceed; a write larger than what is held still waits for a
   * PULL (and times out here). The client then reads every small write's bytes in order, and
   * the DataNode's close after them.
   */
  @Test
  void smallWritesDoNotWaitForTheClientsPulls() throws Exception {
    try (Socket s = connect()) {
      Peer p = accept();
      p.setWriteTimeout(2000);
      OutputStream dn = p.getOutputStream();
      java.io.ByteArrayOutputStream expected = new java.io.ByteArrayOutputStream();
      for (int i = 0; i < 200; i++) {
        byte[] ack = new byte[17];
        java.util.Arrays.fill(ack, (byte) i);
        expected.write(ack);
        dn.write(ack);
        dn.flush();
      }
      p.setWriteTimeout(300);
      byte[] large = new byte[HeldWrites.MAX + 1];
      boolean waited = false;
      for (int i = 0; i <= TransferConf.from(new Configuration(false)).pulls(true) && !waited;
          i++) { // each takes one of the PULLs parked meanwhile, if any
        java.util.Arrays.fill(large, (byte) (100 + i));
        try {
          dn.write(large);
          expected.write(large);
        } catch (SocketTimeoutException e) {
          waited = true;
        }
      }
      assertTrue(waited, "bounded: a large write waits for a PULL once all are taken");
      p.close();
      DataInputStream in = new DataInputStream(NetUtils.getInputStream(s, 5000));
      byte[] got = new byte[expected.size()];
      in.readFully(got);
      assertArrayEquals(expected.toByteArray(), got);
      assertEquals(-1, in.read(), "the DataNode's close comes after its bytes");
    }
  }

  @Test
  void theClientClosingIsEndOfStreamForTheDataNode() throws Exception {
    Peer p;
    try (Socket s = connect()) {
      p = accept();
      NetUtils.getOutputStream(s, 5000).write(1);
      assertEquals(1, p.getInputStream().read());
    }
    assertEquals(-1, p.getInputStream().read());
    assertThrows(IOException.class, () -> p.getOutputStream().write(new byte[] {1}),
        "a write to a client that left fails at once");
  }

  @Test
  void anInterruptedReadRaisesInterruptedIoException() throws Exception {
    try (Socket s = connect()) {
      accept();
      InputStream in = NetUtils.getInputStream(s, 10_000);
      Thread reader = Thread.currentThread();
      CompletableFuture.runAsync(() -> {
        sleep(300);
        reader.interrupt();
      });
      assertThrows(InterruptedIOException.class, in::read);
      assertTrue(Thread.interrupted());
    }
  }

  @Test
  void manyShortWaitsReuseHadoopsSelectorsCleanly() throws Exception {
    try (Socket s = connect()) {
      Peer p = accept();
      InputStream in = NetUtils.getInputStream(s, 5000);
      OutputStream out = NetUtils.getOutputStream(s, 5000);
      p.setReadTimeout(5000);
      for (int i = 0; i < 2000; i++) {
        out.write(i & 0x7f);
        assertEquals(i & 0x7f, p.getInputStream().read());
        p.getOutputStream().write(i & 0x3f);
        assertEquals(i & 0x3f, in.read());
      }
    }
  }

  @Test
  void strictRefusesAnEndpointThatIsNotAnHdfsTransferService() throws Exception {
    try (Listener other = endpoint.transport.listen(new InetSocketAddress("127.0.0.1", 0),
        (c, req, responder) -> {
          req.release();
          responder.fail(9, "shuffle here");
        })) {
      Socket s = new RdmaSocketFactory(client).createSocket();
      ConnectException e = assertThrows(ConnectException.class,
          () -> NetUtils.connect(s, other.address(), 5000));
      assertTrue(e.getMessage().contains(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY),
          e.getMessage());
      assertFalse(s.isConnected());
    }
  }

  /**
   * A DataNode restarting for an upgrade is down for a moment, then listens on the same port;
   * HDFS waits for it and reconnects. A strict client has no TCP to remember it by: its next
   * stream tries the transport again (before, it refused the DataNode untried for the 60 s of
   * the negative cache).
   */
  @Test
  void strictTriesAgainADataNodeThatWasDownAMomentAgo() throws Exception {
    endpoint.stopListening();
    Socket down = new RdmaSocketFactory(client).createSocket();
    assertThrows(ConnectException.class, () -> NetUtils.connect(down, at, 5000));
    endpoint.listenAgain(at);
    try (Socket s = connect()) {
      assertTrue(s.isConnected());
      try (Peer p = accept()) {
        s.getOutputStream().write(7);
        s.getOutputStream().flush();
        assertEquals(7, p.getInputStream().read());
      }
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
