/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;

import org.hadoophpc.fs.UnsafePathException.Problem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Directories this process keeps in shared places ({@code /tmp}, {@code /dev/shm}, a Lustre
 * directory every user writes): made mode 700 one component at a time below a trusted root, and
 * refused ({@link UnsafePathException}) when one already there is not this user's, a symbolic
 * link, or open to writes by group or others. Other users can make any name in a shared place
 * first; a directory they made (or a link they put there) would let them read or replace what we
 * keep in it. One of ours that only we could write to (755, as releases before this check made
 * {@code /tmp/hadoop-hpc-<user>} with the umask) holds nothing of anyone else's: it is set to
 * 700 and used, not refused, so an upgrade does not silently lose what was there.
 *
 * <p>Every component below the root is looked at without following links; the root itself is
 * an administrator's choice and is followed, but it must belong to root or to this user and, if
 * others may write to it, carry the sticky bit (so no one else can rename what we make there).
 * Owners are compared as numbers: no name service call unless a check fails. Stateless and
 * thread-safe.
 */
public final class PrivateDirs {
  private static final Logger LOG = LoggerFactory.getLogger(PrivateDirs.class);
  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rwx------");
  private static final int S_IFMT = 0170000;
  private static final int S_IFDIR = 0040000;
  private static final int S_IFREG = 0100000;
  private static final int S_IFLNK = 0120000;
  private static final int S_ISVTX = 01000;
  private static Integer processUid;

  private PrivateDirs() {
  }

  /**
   * Makes {@code dir} private below its trusted root: the deepest ancestor that is a shared
   * directory (writable by others, with the sticky bit: {@code /tmp}, {@code /dev/shm}), or
   * else the deepest ancestor that exists. Returns {@code dir}.
   */
  public static Path create(Path dir) throws IOException {
    Path d = dir.toAbsolutePath().normalize();
    Path existing = null;
    for (Path a = d.getParent(); a != null; a = a.getParent()) {
      Map<String, Object> s = statOrNull(a);
      if (s == null) {
        continue;
      }
      if (existing == null) {
        existing = a;
      }
      int mode = (Integer) s.get("mode");
      if ((mode & S_IFMT) == S_IFDIR && (mode & 02) != 0 && (mode & S_ISVTX) != 0) {
        return create(a, d);
      }
    }
    return create(existing == null ? d.getRoot() : existing, d);
  }

  /**
   * Makes {@code dir} and every directory between it and {@code root} that is missing, each mode
   * 700; each one already there must be a directory of this user's, no link, that no one else
   * may write to (it is set to 700). Returns {@code dir}.
   */
  public static Path create(Path root, Path dir) throws IOException {
    Path r = root.toAbsolutePath().normalize();
    Path d = dir.toAbsolutePath().normalize();
    if (!d.startsWith(r) || d.equals(r)) {
      throw new IllegalArgumentException(d + " is not below " + r);
    }
    checkRoot(r);
    Path at = r;
    for (Path name : r.relativize(d)) {
      at = at.resolve(name);
      if (statOrNull(at) == null) {
        try {
          Files.createDirectory(at, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
          // A umask may have taken bits away; the directory is ours and new, so set them.
          Files.setPosixFilePermissions(at, OWNER_ONLY);
        } catch (FileAlreadyExistsException raced) {
          // made meanwhile (by us or someone else): checked below like any
        }
      }
      makePrivate(at);
    }
    return d;
  }

  /**
   * Checks one component as {@link #checkPrivateDir} does, except that a directory of ours no
   * one else could write to is set to 700. Safe from swaps: its parent is the sticky root or a
   * directory of ours alone, so no one else can rename it between the check and the chmod.
   */
  private static void makePrivate(Path dir) throws IOException {
    Map<String, Object> s = stat(dir);
    int mode = (Integer) s.get("mode");
    checkKind(dir, mode, S_IFDIR, "directory");
    checkOwner(dir, s);
    if ((mode & 07777) != 0700 && (mode & 022) == 0) {
      Files.setPosixFilePermissions(dir, OWNER_ONLY);
      LOG.info("set {} to mode 700 (was {}): a directory of this user's in a shared place",
          dir, octal(mode));
      return;
    }
    checkMode(dir, mode);
  }

  /** Refuses {@code dir} unless it is a directory of this user's, mode 700, and no link. */
  public static void checkPrivateDir(Path dir) throws IOException {
    Map<String, Object> s = stat(dir);
    int mode = (Integer) s.get("mode");
    checkKind(dir, mode, S_IFDIR, "directory");
    checkOwner(dir, s);
    checkMode(dir, mode);
  }

  private static void checkMode(Path dir, int mode) throws IOException {
    if ((mode & 022) != 0) {
      throw new UnsafePathException(dir, Problem.OPEN_MODE, dir + " has mode " + octal(mode)
          + " but must be 700 (this user's alone): others may have put something in it."
          + " Remove it (it is made again, mode 700) or choose another directory");
    }
    if ((mode & 0777) != 0700) {
      throw new UnsafePathException(dir, Problem.OPEN_MODE, dir + " has mode " + octal(mode)
          + " but must be 700 (this user's alone): others could read what is kept there."
          + " Run 'chmod 700 " + dir + "' if you made it, or remove it");
    }
  }

  /**
   * Refuses {@code file} unless it is a regular file of this user's and no link: what another
   * process of this user wrote (a map output, say), not something put in its place.
   */
  public static void checkOwnedFile(Path file) throws IOException {
    Map<String, Object> s = stat(file);
    checkKind(file, (Integer) s.get("mode"), S_IFREG, "regular file");
    checkOwner(file, s);
  }

  /** This process's user id (the owner of {@code /proc/self}). */
  public static synchronized int processUid() throws IOException {
    if (processUid == null) {
      processUid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }
    return processUid;
  }

  /**
   * Refuses {@code root} as a place to make private directories in unless it is a directory of
   * root's or this user's that others may not write to, or may only with the sticky bit set.
   */
  public static void checkRoot(Path root) throws IOException {
    Path real = root.toRealPath();
    Map<String, Object> s = Files.readAttributes(real, "unix:uid,mode");
    int mode = (Integer) s.get("mode");
    int uid = (Integer) s.get("uid");
    if ((mode & S_IFMT) != S_IFDIR) {
      throw new UnsafePathException(root, Problem.WRONG_TYPE, root + " is not a directory");
    }
    if (uid != 0 && uid != processUid()) {
      throw new UnsafePathException(root, Problem.FOREIGN_OWNER, root + " belongs to "
          + owner(real) + " (mode " + octal(mode) + "), neither to root nor to this user "
          + self() + ": its owner could replace what is made there. Choose a directory of this"
          + " user's or a shared one owned by root");
    }
    if ((mode & 022) != 0 && (mode & S_ISVTX) == 0) {
      throw new UnsafePathException(root, Problem.UNSAFE_ROOT, root + " (mode " + octal(mode)
          + ") may be written by others and has no sticky bit: they could rename or replace"
          + " what is made there. Choose a directory of this user's, or ask an administrator"
          + " for 'chmod +t " + root + "'");
    }
  }

  private static void checkKind(Path p, int mode, int kind, String what) throws IOException {
    if ((mode & S_IFMT) == S_IFLNK) {
      String target;
      try {
        target = Files.readSymbolicLink(p).toString();
      } catch (IOException e) {
        target = "?";
      }
      throw new UnsafePathException(p, Problem.SYMLINK, p + " is a symbolic link (to " + target
          + "), not a " + what + " of this user's: someone may be redirecting it. Remove the"
          + " link; it is made again, mode 700");
    }
    if ((mode & S_IFMT) != kind) {
      throw new UnsafePathException(p, Problem.WRONG_TYPE, p + " is not a " + what
          + "; remove it or choose another path");
    }
  }

  private static void checkOwner(Path p, Map<String, Object> s) throws IOException {
    if ((Integer) s.get("uid") != processUid()) {
      throw new UnsafePathException(p, Problem.FOREIGN_OWNER, p + " belongs to " + owner(p)
          + " (mode " + octal((Integer) s.get("mode")) + "), not to this user " + self()
          + ": another user made it first and could read or replace what is kept there."
          + " Remove it (ask its owner or an administrator) or choose another directory");
    }
  }

  private static Map<String, Object> stat(Path p) throws IOException {
    return Files.readAttributes(p, "unix:uid,mode", LinkOption.NOFOLLOW_LINKS);
  }

  private static Map<String, Object> statOrNull(Path p) throws IOException {
    try {
      return stat(p);
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  private static String owner(Path p) {
    try {
      Map<String, Object> s = stat(p);
      return Files.getOwner(p, LinkOption.NOFOLLOW_LINKS).getName() + " (uid " + s.get("uid")
          + ")";
    } catch (IOException e) {
      return "another user";
    }
  }

  private static String self() throws IOException {
    return System.getProperty("user.name") + " (uid " + processUid() + ")";
  }

  private static String octal(int mode) {
    return Integer.toOctalString(mode & 07777);
  }
}
