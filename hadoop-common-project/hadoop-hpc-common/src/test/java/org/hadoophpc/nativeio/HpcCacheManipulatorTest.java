/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.hadoop.io.nativeio.NativeIO;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The cache manipulator a DataNode gets from {@link HpcCacheManipulator#install()}: it locks a
 * mapped block file for real (as HDFS caching does), reports the limit and page size, advises
 * files, and gives Hadoop's POSIX_FADV_* constants their Linux numbers.
 */
class HpcCacheManipulatorTest {
  @BeforeAll
  static void needsTheLibrary() {
    NativeTestSupport.assumeNativeAvailable();
  }

  @Test
  void installsItselfAndTheFadviseNumbers() {
    assertEquals(HpcCacheManipulator.Installed.HPCNATIVE, HpcCacheManipulator.install());
    NativeIO.POSIX.CacheManipulator installed = NativeIO.POSIX.getCacheManipulator();
    assertTrue(installed instanceof HpcCacheManipulator, installed.getClass().getName());
    assertTrue(installed.verifyCanMlock());
    HpcCacheManipulator.install();
    assertSame(installed, NativeIO.POSIX.getCacheManipulator(), "install() is idempotent");
    assertEquals(4, NativeIO.POSIX.POSIX_FADV_DONTNEED);
    assertEquals(3, NativeIO.POSIX.POSIX_FADV_WILLNEED);
    assertEquals(2, NativeIO.POSIX.POSIX_FADV_SEQUENTIAL);
  }

  @Test
  void locksAMappedBlockFileAndAdvisesIt(@TempDir Path dir) throws IOException {
    HpcCacheManipulator m = new HpcCacheManipulator();
    long page = m.getOperatingSystemPageSize();
    assertTrue(page >= 4096 && Long.bitCount(page) == 1, "page size " + page);
    assertTrue(m.getMemlockLimit() >= 4 * page, "limit " + m.getMemlockLimit());

    Path block = dir.resolve("blk_1");
    Files.write(block, new byte[(int) (4 * page)]);
    try (RandomAccessFile f = new RandomAccessFile(block.toFile(), "r");
        FileChannel ch = f.getChannel()) {
      MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_ONLY, 0, 4 * page);
      m.mlock("blk_1", map, 4 * page);
      NativeMemory.munlock(map, 4 * page);
    }
    try (FileInputStream in = new FileInputStream(block.toFile())) {
      m.posixFadviseIfPossible("blk_1", in.getFD(), 0, 0, NativeMemory.FADV_DONTNEED);
      IOException bad = assertThrows(IOException.class,
          () -> m.posixFadviseIfPossible("blk_1", in.getFD(), 0, 0, 99));
      assertTrue(bad.getMessage().contains("blk_1"), bad.getMessage());
    }
  }

  @Test
  void refusesHeapBuffersAndLengthsPastTheEnd() {
    HpcCacheManipulator m = new HpcCacheManipulator();
    IOException heap = assertThrows(IOException.class,
        () -> m.mlock("heap", ByteBuffer.allocate(4096), 4096));
    assertTrue(heap.getMessage().contains("cannot lock 4096 bytes of heap"), heap.getMessage());
    assertThrows(IOException.class,
        () -> m.mlock("short", ByteBuffer.allocateDirect(4096), 8192));
  }
}
