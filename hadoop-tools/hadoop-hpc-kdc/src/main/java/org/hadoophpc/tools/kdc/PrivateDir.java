/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.tools.kdc;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Set;

import org.hadoophpc.fs.PrivateDirs;

/**
 * The directory that holds a job's keytabs and key stores: it must belong to the user running
 * the KDC and be readable by nobody else (mode 700), checked before anything secret is written
 * (another user of the node could have created the path first). Files are written to a temporary
 * name, set to mode 600 and moved into place, so a reader never sees a half-written keytab.
 * Not thread-safe; used by the KDC's main thread.
 */
final class PrivateDir {
  private static final Set<PosixFilePermission> FILE_MODE = PosixFilePermissions.fromString("rw-------");

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path dir;

  private PrivateDir(Path dir) {
    this.dir = dir;
  }

  /**
   * Checks DIR: a directory (not a link) of this process's user, mode 700, by the rule every
   * private directory of ours follows ({@link PrivateDirs#checkPrivateDir}).
   */
  static PrivateDir check(Path dir) throws NotPrivateException {
    try {
      PrivateDirs.checkPrivateDir(dir);
    } catch (IOException e) {
      throw new NotPrivateException(e.getMessage() + "; refusing to put keytabs there", e);
    }
    return new PrivateDir(dir);
  }

  Path path() {
    return dir;
  }

  Path resolve(String name) {
    return dir.resolve(name);
  }

  /**
   * A path in this directory that does not exist yet, for a writer that creates the file itself
   * and then calls publish (nobody else can create files here: the directory is ours, mode 700).
   */
  Path tempName(String name) {
    Path p;
    do {
      p = dir.resolve("." + name + "." + Long.toUnsignedString(RANDOM.nextLong(), 36) + ".tmp");
    } while (Files.exists(p, LinkOption.NOFOLLOW_LINKS));
    return p;
  }

  /** Moves TEMP (from tempName) to NAME, mode 600, replacing what was there. */
  Path publish(Path temp, String name) throws IOException {
    Files.setPosixFilePermissions(temp, FILE_MODE);
    return Files.move(temp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** Writes TEXT to NAME (mode 600) through a temporary file. */
  Path write(String name, String text) throws IOException {
    Path temp = Files.createFile(tempName(name), PosixFilePermissions.asFileAttribute(FILE_MODE));
    Files.writeString(temp, text);
    return publish(temp, name);
  }

  /** The directory is not a private directory of this user. */
  static final class NotPrivateException extends IOException {
    private static final long serialVersionUID = 1L;

    NotPrivateException(String message) {
      super(message);
    }

    NotPrivateException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
