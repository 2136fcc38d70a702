/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * What a DataNode's transport endpoint lets a peer do before and after its HELLO, seen from a
 * raw socket that speaks the tcp transport's frames by hand (a hostile peer): before a valid
 * HELLO one small request, no pooled memory while it trickles in, closed after
 * {@code hello.timeout}; after it, no request larger than a chunk and its header; at most
 * {@code max.connections.per.address} from one address.
 */
class TransferAdmissionTest {
  /** The tcp transport's frame header (TcpFrame): type, version, 0, length, op id, ... */
  private static final int FRAME_HEADER = 40;
  private static final byte FRAME_REQUEST = 1;
  private static final byte FRAME_RESPONSE = 2;
  private static final int CHUNK = 64 * 1024;

  private DataNodeEndpoint endpoint;
  private InetSocketAddress at;

  @BeforeEach
  void setUp() throws IOException {
    Configuration conf = new Configuration(false);
    conf.set("hadoop.hpc.transport", "tcp");
    conf.set(TransferConfigKeys.HELLO_TIMEOUT_KEY, "600ms");
    conf.set(TransferConfigKeys.CHUNK_SIZE_KEY, String.valueOf(CHUNK));
    conf.setInt(TransferConfigKeys.MAX_CONNECTIONS_PER_ADDRESS_KEY, 3);
    endpoint = new DataNodeEndpoint(conf, TransferMetrics.of("admission-test"));
    at = endpoint.address();
  }

  @AfterEach
  void tearDown() throws IOException {
    endpoint.close();
  }

  private static byte[] frameHeader(byte type, int payload, long opId) {
    ByteBuffer h = ByteBuffer.allocate(FRAME_HEADER);
    h.put(type).put((byte) 1).putShort((short) 0).putInt(payload).putLong(opId);
    return h.array();
  }

  private static byte[] hello() {
    ByteBuffer b = ByteBuffer.allocate(TransferWire.HELLO_BYTES);
    TransferWire.requestHeader(b, TransferWire.HELLO, (byte) 0, 0);
    b.putInt(TransferWire.MAGIC).putShort(TransferWire.VERSION)
        .put((byte) TransferMetrics.Role.CLIENT.ordinal()).putInt(1);
    return b.array();
  }

  /** Sends a valid HELLO on {@code s} and reads its answer, which must be OK. */
  private static void sayHello(Socket s) throws IOException {
    OutputStream out = s.getOutputStream();
    out.write(frameHeader(FRAME_REQUEST, TransferWire.HELLO_BYTES, 7));
    out.write(hello());
    out.flush();
    DataInputStream in = new DataInputStream(s.getInputStream());
    byte[] h = new byte[FRAME_HEADER];
    in.readFully(h);
    ByteBuffer header = ByteBuffer.wrap(h);
    assertEquals(FRAME_RESPONSE, header.get(0), "the HELLO's answer");
    byte[] ok = new byte[header.getInt(4)];
    in.readFully(ok);
    assertEquals(TransferWire.OK, ok[0], "the HELLO accepted");
  }

  private Socket connect() throws IOException {
    Socket s = new Socket();
    s.connect(at, 5000);
    s.setSoTimeout(5000);
    return s;
  }

  /** True when the endpoint closed {@code s} within its read timeout (nothing else arrives). */
  private static boolean closedByServer(Socket s) throws IOException {
    InputStream in = s.getInputStream();
    byte[] b = new byte[4096];
    try {
      while (true) {
        if (in.read(b) < 0) {
          return true;
        }
      }
    } catch (SocketTimeoutException e) {
      return false;
    } catch (IOException e) {
      return true; // reset
    }
  }

  private long poolUsed() {
    return endpoint.transport.bufferPool().usedBytes();
  }

  /** Waits up to 2 s for the pool's used bytes to reach {@code expected}. */
  private void awaitPoolUsed(long expected) throws InterruptedException {
    long end = System.nanoTime() + 2_000_000_000L;
    while (poolUsed() != expected && System.nanoTime() < end) {
      Thread.sleep(10);
    }
    assertEquals(expected, poolUsed(), endpoint.transport.bufferPool().toString());
  }

  @Test
  void aLargeFrameBeforeHelloClosesTheConnectionWithoutTakingPoolMemory() throws Exception {
    long before = poolUsed();
    try (Socket s = connect()) {
      OutputStream out = s.getOutputStream();
      out.write(frameHeader(FRAME_REQUEST, 16 * 1024 * 1024, 1));
      out.write(new byte[100]); // and then trickles
      out.flush();
      Thread.sleep(200);
      assertEquals(before, poolUsed(), "pool memory taken for an unauthenticated peer's frame");
      s.setSoTimeout(3000);
      assertTrue(closedByServer(s), "a frame beyond the pre-HELLO limit must close it");
    }
  }

  @Test
  void aSmallFrameTricklingInBeforeHelloHoldsNoPoolMemory() throws Exception {
    long before = poolUsed();
    try (Socket s = connect()) {
      OutputStream out = s.getOutputStream();
      out.write(frameHeader(FRAME_REQUEST, TransferHandler.HELLO_MAX_BYTES, 1));
      out.write(new byte[10]);
      out.flush();
      Thread.sleep(200);
      assertEquals(before, poolUsed(), "pool memory taken for a frame still arriving");
    }
  }

  @Test
  void aConnectionWithoutHelloIsClosedAfterTheHelloTimeout() throws Exception {
    try (Socket s = connect()) {
      s.setSoTimeout(4000); // hello.timeout is 600 ms
      assertTrue(closedByServer(s), "a connection that never says HELLO must be closed");
    }
  }

  @Test
  void aValidHelloIsAnsweredAndTheConnectionOutlivesTheHelloTimeout() throws Exception {
    try (Socket s = connect()) {
      sayHello(s);
      s.setSoTimeout(1500); // beyond hello.timeout: trusted now, it stays open
      assertTrue(!closedByServer(s), "a stream that said HELLO must stay open");
      endpoint.peers.accept().close();
    }
  }

  @Test
  void connectionsFromOneAddressAreCapped() throws Exception {
    try (Socket a = connect(); Socket b = connect(); Socket c = connect(); Socket d = connect()) {
      d.setSoTimeout(300);
      assertTrue(closedByServer(d), "a fourth connection from one address (cap 3)");
      a.setSoTimeout(300);
      assertTrue(!closedByServer(a), "the first three stay (until hello.timeout)");
    }
  }

  @Test
  void aDataMessageLargerThanAChunkIsAProtocolError() throws Exception {
    long before = poolUsed();
    try (Socket s = connect()) {
      OutputStream out = s.getOutputStream();
      sayHello(s);
      int size = TransferWire.REQUEST_HEADER + CHUNK + 1;
      ByteBuffer data = ByteBuffer.allocate(size);
      TransferWire.requestHeader(data, TransferWire.DATA, 0);
      out.write(frameHeader(FRAME_REQUEST, size, 8));
      out.write(data.array(), 0, size);
      out.flush();
      s.setSoTimeout(3000);
      assertTrue(closedByServer(s), "a DATA message beyond the chunk must close the connection");
      awaitPoolUsed(before);
      endpoint.peers.accept().close();
    }
  }
}
