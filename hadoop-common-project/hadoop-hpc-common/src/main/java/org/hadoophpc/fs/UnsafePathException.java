/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A path in a shared place that this process did not make for itself: another user's, open to
 * others, a symbolic link, or not the kind of file expected. The message names the path, its
 * owner and mode, and what to do; {@link #path()} and {@link #problem()} say the same for code.
 */
public final class UnsafePathException extends IOException {
  private static final long serialVersionUID = 1L;

  /** What is wrong with the path. */
  public enum Problem {
    /** Owned by another user. */
    FOREIGN_OWNER,
    /** Ours, but group or others have access (a private directory must be 700). */
    OPEN_MODE,
    /** A symbolic link where a directory or file of ours belongs. */
    SYMLINK,
    /** Not a directory (or not a regular file, for a file check). */
    WRONG_TYPE,
    /** A trusted root others may write to without the sticky bit. */
    UNSAFE_ROOT
  }

  private final Path path;
  private final Problem problem;

  public UnsafePathException(Path path, Problem problem, String message) {
    super(message);
    this.path = path;
    this.problem = problem;
  }

  public Path path() {
    return path;
  }

  public Problem problem() {
    return problem;
  }
}
