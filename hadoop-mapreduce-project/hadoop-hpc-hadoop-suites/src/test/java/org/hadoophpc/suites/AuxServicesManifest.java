/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.suites;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

/**
 * Writes YARN's auxiliary-services manifest that this module's yarn-site.xml names, before any
 * test runs: one service, {@code mapreduce_shuffle} = HpcShuffleHandler. YARN reads it only if
 * the file and every parent directory are writable by their owner alone, so it lives under the
 * user's home, not the build directory (whose parents a CI machine may leave group-writable).
 */
public final class AuxServicesManifest implements LauncherSessionListener {
  static final String SERVICE = "org.hadoophpc.yarn.shuffle.HpcShuffleHandler";

  static Path location() {
    return Paths.get(System.getProperty("user.home"), ".cache", "hadoop-hpc", "hadoop-suites",
        "aux-services.json");
  }

  @Override
  public void launcherSessionOpened(LauncherSession session) {
    Path file = location();
    String json = "{\"services\": [{\"name\": \"mapreduce_shuffle\", \"version\": \"1\","
        + " \"configuration\": {\"properties\": {\"class.name\": \"" + SERVICE + "\"}}}]}\n";
    try {
      Files.createDirectories(file.getParent());
      for (Path d = file.getParent(); d != null && d.startsWith(
          Paths.get(System.getProperty("user.home"), ".cache")); d = d.getParent()) {
        Files.setPosixFilePermissions(d, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      // Test classes run two at a time, each JVM writing this file as it starts while the
      // other's NodeManagers may be reading it: written aside, then renamed over it.
      Path tmp = Files.createTempFile(file.getParent(), "aux-services", ".json");
      try {
        Files.writeString(tmp, json, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-r--r--"));
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(tmp);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the aux-services manifest " + file, e);
    }
  }
}
