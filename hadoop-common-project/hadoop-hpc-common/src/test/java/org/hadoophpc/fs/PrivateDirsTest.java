/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs;

import static org.hadoophpc.fs.SharedPlaces.giveToNobody;
import static org.hadoophpc.fs.SharedPlaces.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.hadoophpc.fs.UnsafePathException.Problem;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What {@link PrivateDirs} makes in a shared place and what it refuses there. Tests that plant a
 * path owned by another user need root (to chown) and are skipped otherwise; CI runs as root.
 */
class PrivateDirsTest {
  @TempDir
  Path tmp;

  private static String mode(Path p) throws Exception {
    return PosixFilePermissions.toString(
        Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
  }

  /** A directory named as ours would be, made first with {@code mode}. */
  private Path planted(int mode) throws Exception {
    Path planted = Files.createDirectory(tmp.resolve("hadoop-hpc-me"));
    Files.setAttribute(planted, "unix:mode", mode);
    return planted;
  }

  @Test
  void missingDirectoriesAreMadeForThisUserAlone() throws Exception {
    Path d = PrivateDirs.create(tmp, tmp.resolve("a/b/c"));
    assertEquals(tmp.resolve("a/b/c"), d);
    for (String p : new String[] {"a", "a/b", "a/b/c"}) {
      assertEquals("rwx------", mode(tmp.resolve(p)), p);
    }
    PrivateDirs.create(tmp, d); // again: all there, all ours
  }

  @Test
  void aDirectoryOfOursOthersCanWriteIsRefused() throws Exception {
    Path planted = planted(0775);
    UnsafePathException e = refused(Problem.OPEN_MODE, planted,
        () -> PrivateDirs.create(tmp, planted.resolve("sockets")));
    assertTrue(e.getMessage().contains(planted + " has mode 775 but must be 700 (this user's"
        + " alone): others may have put something in it"), e.getMessage());
    assertFalse(Files.exists(planted.resolve("sockets")), "nothing made below it");
  }

  @Test
  void aDirectoryOfOursOnlyWeCouldWriteIsMadePrivate() throws Exception {
    Path legacy = planted(0755); // as releases before this check made them
    PrivateDirs.create(tmp, legacy.resolve("sockets"));
    assertEquals("rwx------", mode(legacy));
    Files.setAttribute(legacy, "unix:mode", 0755);
    refused(Problem.OPEN_MODE, legacy, () -> PrivateDirs.checkPrivateDir(legacy)); // no change
  }

  @Test
  void anotherUsersDirectoryIsRefused() throws Exception {
    Path planted = planted(0700);
    giveToNobody(planted);
    UnsafePathException e = refused(Problem.FOREIGN_OWNER, planted,
        () -> PrivateDirs.create(tmp, planted.resolve("sockets")));
    assertTrue(e.getMessage().startsWith(planted + " belongs to "), e.getMessage());
    assertTrue(e.getMessage().contains("uid " + SharedPlaces.NOBODY), e.getMessage());
    assertFalse(Files.exists(planted.resolve("sockets")));
  }

  @Test
  void aSymlinkedComponentIsRefusedAndNothingIsMadeWhereItPoints() throws Exception {
    Path elsewhere = Files.createDirectory(tmp.resolve("elsewhere"));
    Path link = Files.createSymbolicLink(tmp.resolve("hadoop-hpc-me"), elsewhere);
    refused(Problem.SYMLINK, link, () -> PrivateDirs.create(tmp, link.resolve("sockets")));
    try (var s = Files.list(elsewhere)) {
      assertEquals(0, s.count(), "nothing made through the link");
    }
  }

  @Test
  void aRootOthersMayWriteWithoutTheStickyBitIsRefused() throws Exception {
    Path open = Files.createDirectory(tmp.resolve("open"));
    Files.setAttribute(open, "unix:mode", 0777);
    refused(Problem.UNSAFE_ROOT, open, () -> PrivateDirs.create(open, open.resolve("job")));
    Files.setAttribute(open, "unix:mode", 01777);
    PrivateDirs.create(open, open.resolve("job"));
    assertEquals("rwx------", mode(open.resolve("job")));
  }

  @Test
  void belowASharedStickyDirectoryEveryComponentMustBeOurs() throws Exception {
    Path shared = SharedPlaces.sticky(tmp.resolve("shared")); // like /tmp
    Path planted = Files.createDirectory(shared.resolve("hadoop-hpc-me"));
    Files.setAttribute(planted, "unix:mode", 0777);
    refused(Problem.OPEN_MODE, planted, () -> PrivateDirs.create(planted.resolve("sockets")));
    Files.delete(planted);
    PrivateDirs.create(planted.resolve("sockets"));
    assertEquals("rwx------", mode(planted));
  }

  @Test
  void anOwnedFileMustBeOursAndNoLink() throws Exception {
    Path file = Files.writeString(tmp.resolve("file.out"), "x");
    PrivateDirs.checkOwnedFile(file);
    Path link = Files.createSymbolicLink(tmp.resolve("file.out.index"), file);
    refused(Problem.SYMLINK, link, () -> PrivateDirs.checkOwnedFile(link));
    giveToNobody(file);
    refused(Problem.FOREIGN_OWNER, file, () -> PrivateDirs.checkOwnedFile(file));
  }
}
