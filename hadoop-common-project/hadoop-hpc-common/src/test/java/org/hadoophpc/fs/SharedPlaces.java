/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;

import org.hadoophpc.fs.UnsafePathException.Problem;
import org.junit.jupiter.api.function.Executable;

/**
 * For tests of {@link PrivateDirs}' callers: what another user can leave in a shared place.
 * Planting a path of another user needs root; without it the calling test is skipped.
 */
public final class SharedPlaces {
  /** The uid of "nobody" on Linux distributions. */
  public static final int NOBODY = 65534;

  private SharedPlaces() {
  }

  /** {@code dir} made like {@code /tmp}: everyone may write it, the sticky bit guards names. */
  public static Path sticky(Path dir) throws IOException {
    Files.createDirectory(dir);
    Files.setAttribute(dir, "unix:mode", 01777);
    return dir;
  }

  /** Gives {@code p} to nobody, as if that user had made it; skips the test unless root. */
  public static void giveToNobody(Path p) throws IOException {
    assumeTrue(PrivateDirs.processUid() == 0, "needs root to plant another user's path");
    Files.setAttribute(p, "unix:uid", NOBODY, LinkOption.NOFOLLOW_LINKS);
  }

  /** {@code call} refuses {@code path} for {@code problem}; the exception, for more checks. */
  public static UnsafePathException refused(Problem problem, Path path, Executable call) {
    UnsafePathException e = assertThrows(UnsafePathException.class, call);
    assertEquals(problem, e.problem(), e.getMessage());
    assertEquals(path, e.path(), e.getMessage());
    return e;
  }
}
