/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.lustre;

import static org.hadoophpc.fs.SharedPlaces.giveToNobody;
import static org.hadoophpc.fs.SharedPlaces.refused;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.fs.UnsafePathException.Problem;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where map outputs are published, how, and how they go away. */
class SharedMapOutputsTest {
  private static final String JOB = "job_1700000000000_0007";
  private static final String ATTEMPT = "attempt_1700000000000_0007_m_000003_1";

  @TempDir
  Path tmp;

  private SharedMapOutputs at(String dir) {
    Configuration c = new Configuration(false);
    c.set(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY, dir);
    return SharedMapOutputs.from(c);
  }

  @Test
  void unsetRelativeOrRemoteDirectoriesAreRefusedNamingTheKey() {
    for (String bad : new String[] {"", "relative/dir", "hdfs://nn:9000/x"}) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> at(bad),
          bad);
      assertTrue(e.getMessage().contains(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY),
          e.getMessage());
    }
    assertEquals(tmp, at(tmp.toUri().toString()).root(), "file:/// URIs are accepted");
  }

  @Test
  void checkUsableSaysWhatIsWrong() throws IOException {
    IOException e = assertThrows(IOException.class,
        () -> at(tmp.resolve("missing").toString()).checkUsable());
    assertTrue(e.getMessage().contains(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + "="
        + tmp.resolve("missing") + " does not exist"), e.getMessage());
    Path file = Files.writeString(tmp.resolve("file"), "x");
    e = assertThrows(IOException.class, () -> at(file.toString()).checkUsable());
    assertTrue(e.getMessage().contains("is not a directory"), e.getMessage());
    at(tmp.toString()).checkUsable();
  }

  @Test
  void publishLinksOnTheSameFileSystemAndDeleteJobRemovesEverything() throws IOException {
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Path local = Files.createDirectory(tmp.resolve("local"));
    Path out = Files.write(local.resolve("file.out"), "map output".getBytes(StandardCharsets.UTF_8));
    Path index = Files.write(local.resolve("file.out.index"), new byte[] {1, 2, 3});
    SharedMapOutputs s = at(shared.toString());

    assertTrue(s.publish(JOB, ATTEMPT, out, index), "same file system: hard links");
    assertEquals(shared.resolve(JOB).resolve(ATTEMPT).resolve("file.out"), s.output(JOB, ATTEMPT));
    assertTrue(Files.isSameFile(out, s.output(JOB, ATTEMPT)), "a link, not a copy");
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(s.index(JOB, ATTEMPT)));
    assertTrue(Files.exists(out), "the task's own file stays for the stock shuffle");

    // the same attempt publishing again (an AM restart re-running it) replaces its files
    Path out2 = Files.write(local.resolve("file2.out"), "again".getBytes(StandardCharsets.UTF_8));
    Path index2 = Files.write(local.resolve("file2.out.index"), new byte[] {4});
    s.publish(JOB, ATTEMPT, out2, index2);
    assertEquals("again", Files.readString(s.output(JOB, ATTEMPT)));

    assertTrue(s.deleteJob(JOB));
    assertFalse(Files.exists(shared.resolve(JOB)));
    assertFalse(s.deleteJob(JOB), "nothing left to delete");
    assertTrue(Files.exists(out2), "deleting the job's shared files leaves the task's own");
  }

  @Test
  void publishCopiesAcrossFileSystems() throws IOException {
    Path shm = Path.of("/dev/shm");
    assumeTrue(Files.isWritable(shm) && !Files.getFileStore(shm).equals(Files.getFileStore(tmp)),
        "needs /dev/shm on another file system than " + tmp);
    Path local = Files.createTempDirectory(shm, "hpc-publish");
    try {
      Path out = Files.writeString(local.resolve("file.out"), "bytes");
      Path index = Files.writeString(local.resolve("file.out.index"), "idx");
      SharedMapOutputs s = at(tmp.toString());
      assertFalse(s.publish(JOB, ATTEMPT, out, index), "another file system: copies");
      assertEquals("bytes", Files.readString(s.output(JOB, ATTEMPT)));
      assertEquals("idx", Files.readString(s.index(JOB, ATTEMPT)));
      assertFalse(Files.exists(s.attemptDir(JOB, ATTEMPT).resolve("file.out.tmp")));
    } finally {
      org.apache.hadoop.fs.FileUtil.fullyDelete(local.toFile());
    }
  }

  /** A map's output and index in a task directory of its own, ready to publish. */
  private Path[] mapOutput() throws IOException {
    Path local = Files.createDirectory(tmp.resolve("local"));
    return new Path[] {Files.writeString(local.resolve("file.out"), "map output"),
        Files.write(local.resolve("file.out.index"), new byte[] {1, 2, 3})};
  }

  @Test
  void aJobDirectoryAnotherUserMadeFirstIsRefused() throws IOException {
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Path planted = Files.createDirectory(shared.resolve(JOB), PosixFilePermissions
        .asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    giveToNobody(planted);
    Path[] map = mapOutput();
    refused(Problem.FOREIGN_OWNER, planted,
        () -> at(shared.toString()).publish(JOB, ATTEMPT, map[0], map[1]));
    assertFalse(Files.exists(planted.resolve(ATTEMPT)), "nothing published in it");
  }

  @Test
  void aJobDirectoryOthersMayWriteIsRefused() throws IOException {
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Path planted = Files.createDirectory(shared.resolve(JOB));
    Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rwxrwx---"));
    Path[] map = mapOutput();
    refused(Problem.OPEN_MODE, planted,
        () -> at(shared.toString()).publish(JOB, ATTEMPT, map[0], map[1]));
    assertFalse(Files.exists(planted.resolve(ATTEMPT)));
  }

  @Test
  void publishedDirectoriesAreTheUsersAloneAndReadersCheckThem() throws IOException {
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Path[] map = mapOutput();
    SharedMapOutputs s = at(shared.toString());
    s.publish(JOB, ATTEMPT, map[0], map[1]);
    for (Path d : new Path[] {s.jobDir(JOB), s.attemptDir(JOB, ATTEMPT)}) {
      assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(d)));
    }
    s.checkPublished(JOB, ATTEMPT);
    Files.delete(s.index(JOB, ATTEMPT));
    Files.createSymbolicLink(s.index(JOB, ATTEMPT), map[1]);
    refused(Problem.SYMLINK, s.index(JOB, ATTEMPT), () -> s.checkPublished(JOB, ATTEMPT));
  }

  @Test
  void aMapOutputOfAnotherUserIsRefusedToReaders() throws IOException {
    Path shared = Files.createDirectory(tmp.resolve("shared"));
    Path[] map = mapOutput();
    SharedMapOutputs s = at(shared.toString());
    assertTrue(s.publish(JOB, ATTEMPT, map[0], map[1]));
    giveToNobody(s.output(JOB, ATTEMPT));
    refused(Problem.FOREIGN_OWNER, s.output(JOB, ATTEMPT), () -> s.checkPublished(JOB, ATTEMPT));
  }

  @Test
  void idsThatAreNotJobOrMapAttemptIdsAreRefused() {
    SharedMapOutputs s = at(tmp.toString());
    assertThrows(IllegalArgumentException.class, () -> s.jobDir("../etc"));
    assertThrows(IllegalArgumentException.class, () -> s.output(JOB, "attempt_1_2_r_000000_0"));
    assertThrows(IllegalArgumentException.class, () -> s.output(JOB, "../../x"));
  }
}
