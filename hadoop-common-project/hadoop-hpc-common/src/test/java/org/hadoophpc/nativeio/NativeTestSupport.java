/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * Where the tests find what rdma-native built: libhpcnative.so from {@value
 * HpcNative#LIBRARY_PROPERTY} (set by the parent pom's surefire config) and the liblustreapi
 * test doubles from {@value #TEST_LIB_DIR_PROPERTY}, defaulting to {@code build/test-lib}
 * next to the library's {@code lib} directory (rdma-native/target/native).
 */
final class NativeTestSupport {
  static final String TEST_LIB_DIR_PROPERTY = "hadoop.hpc.native.test.lib.dir";

  private NativeTestSupport() {
  }

  /** The built library, or null when the property is unset or the file is absent. */
  static Path builtLibrary() {
    String lib = System.getProperty(HpcNative.LIBRARY_PROPERTY);
    if (lib == null || lib.isEmpty()) {
      return null;
    }
    Path path = Paths.get(lib);
    return Files.isRegularFile(path) ? path : null;
  }

  static void assumeNativeAvailable() {
    assumeTrue(HpcNative.isAvailable(), () -> "libhpcnative not loaded (a -Dnative.skip=true "
        + "build?): " + HpcNative.unavailabilityCause().getMessage());
  }

  /** A test double from rdma-native's test tree; skips the test when it was not built. */
  static Path testLibrary(String fileName) {
    String dir = System.getProperty(TEST_LIB_DIR_PROPERTY);
    Path base;
    if (dir != null && !dir.isEmpty()) {
      base = Paths.get(dir);
    } else {
      String lib = System.getProperty(HpcNative.LIBRARY_PROPERTY, "");
      assumeTrue(!lib.isEmpty(), HpcNative.LIBRARY_PROPERTY + " is not set");
      base = Paths.get(lib).toAbsolutePath().getParent().getParent().resolve("build/test-lib");
    }
    Path path = base.resolve(fileName);
    assumeTrue(Files.isRegularFile(path), () -> path + " not built (a -Dnative.skip=true build?)");
    return path;
  }
}
