/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.common.suites;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.hadoop.io.SecureIOUtils;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.apache.hadoop.util.NativeCodeLoader;
import org.hadoophpc.nativeio.HpcCacheManipulator;
import org.junit.jupiter.api.Test;

/**
 * What an operator checks after installing our libhadoop.so: Hadoop loads it from
 * java.library.path (the path `hadoop checknative` prints is ours) and NativeIO, the part
 * SecureIOUtils needs with Kerberos on, creates files exclusively and reports owner and mode. Hadoop's own tests in this suite skip
 * when the library is absent; this one fails instead.
 */
class LibhadoopIT {

  @Test
  void hadoopLoadsOurLibraryFromTheLibraryPath() throws IOException {
    assertTrue(NativeCodeLoader.isNativeCodeLoaded(),
        "libhadoop.so did not load from " + System.getProperty("java.library.path"));
    Path built = Paths.get(System.getProperty("hadoop.hpc.native.lib"))
        .resolveSibling("libhadoop.so").toRealPath();
    assertEquals(built, Paths.get(NativeCodeLoader.getLibraryName()).toRealPath());
    // codecs this build leaves to Hadoop's Java code
    assertFalse(NativeCodeLoader.buildSupportsOpenssl());
    assertFalse(NativeCodeLoader.buildSupportsZstd());
    assertFalse(NativeCodeLoader.buildSupportsIsal());
  }

  @Test
  void secureIoCreatesFilesOnlyOnceAndReportsTheirOwner() throws IOException {
    assertTrue(NativeIO.isAvailable(), "NativeIO did not initialize");
    assertTrue(NativeIO.POSIX.isAvailable(), "NativeIO.POSIX did not initialize");
    File dir = new File(System.getProperty("test.build.data"), "LibhadoopIT");
    Files.createDirectories(dir.toPath());
    File file = new File(dir, "secure-" + System.nanoTime());
    try (FileOutputStream out = SecureIOUtils.createForWrite(file, 0640)) {
      out.write(42);
      NativeIO.POSIX.Stat stat = NativeIO.POSIX.getFstat(out.getFD());
      assertEquals(System.getProperty("user.name"), stat.getOwner());
      assertFalse(stat.getGroup().isEmpty());
      assertEquals(NativeIO.POSIX.Stat.S_IFREG, stat.getMode() & NativeIO.POSIX.Stat.S_IFMT);
      assertEquals(0640, stat.getMode() & 0777);
    }
    // a second create of the same file is refused (what keeps a shuffle file from being
    // replaced under a reader)
    assertThrows(SecureIOUtils.AlreadyExistsException.class,
        () -> SecureIOUtils.createForWrite(file, 0640).close());
  }

  /**
   * A DataNode with both libraries loaded locks memory through libhpcnative's manipulator:
   * stock's reads the limit as {@code ulimit -l} alone and would refuse a DataNode with
   * CAP_IPC_LOCK (root) the locked memory the kernel lets it have.
   */
  @Test
  void theDataNodeKeepsOurCacheManipulatorBesideLibhadoop() {
    assertTrue(NativeIO.isAvailable(), "NativeIO did not initialize");
    assertEquals(HpcCacheManipulator.Installed.HPCNATIVE, HpcCacheManipulator.install());
    assertTrue(NativeIO.POSIX.getCacheManipulator() instanceof HpcCacheManipulator,
        NativeIO.POSIX.getCacheManipulator().getClass().getName());
  }
}
