/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.fs.SharedPlaces;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checks a DataNode runs before it starts in an HHH mode: each misconfiguration is refused
 * with the key to fix named, and what the mode needs is applied to the configuration.
 */
class HhhDataNodeSetupTest {
  private static final long GIB = 1L << 30;
  private static final Path SHM = Paths.get("/dev/shm");

  @TempDir
  Path disk; // the build's file system, not tmpfs

  @BeforeAll
  static void needsATmpfs() {
    org.junit.jupiter.api.Assumptions.assumeTrue(
        HhhDataNodeSetup.fileSystemType(SHM).equals("tmpfs"), "/dev/shm is not a tmpfs here");
  }

  private Configuration conf(String mode, String dirs) {
    Configuration c = new Configuration(false);
    if (mode != null) {
      c.set(HhhConfigKeys.MODE_KEY, mode);
    }
    c.set("dfs.datanode.data.dir", dirs);
    c.set("dfs.datanode.max.locked.memory", "1g");
    return c;
  }

  private static IllegalArgumentException refused(Configuration c, long limit) {
    return assertThrows(IllegalArgumentException.class,
        () -> HhhDataNodeSetup.apply(c, limit, true, ""));
  }

  /** A stand-in for /dev/shm: everyone writes it, the sticky bit guards their names. */
  private Path shm() throws Exception {
    return SharedPlaces.sticky(disk.resolve("shm"));
  }

  @Test
  void aRamDiskBaseOthersMayWriteIsRefused() throws Exception {
    Path planted = Files.createDirectory(shm().resolve("hadoop-hpc-me"));
    Files.setAttribute(planted, "unix:mode", 0775);
    String ram = planted.resolve("node1/dfs/ram").toString();
    HhhDataNodeSetup setup = HhhDataNodeSetup.apply(conf(null, "[RAM_DISK]" + ram), GIB, true,
        "");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        setup::makeRamDirsPrivate);
    assertTrue(e.getMessage().contains("the [RAM_DISK] directory " + ram + " cannot be made"
        + " private: " + planted + " has mode 775 but must be 700"), e.getMessage());
    assertFalse(Files.exists(planted.resolve("node1")), "nothing made in it");
  }

  @Test
  void aRamDiskBaseOfAnotherUserIsRefused() throws Exception {
    Path planted = Files.createDirectory(shm().resolve("hadoop-hpc-me"));
    Files.setAttribute(planted, "unix:mode", 0700);
    SharedPlaces.giveToNobody(planted);
    HhhDataNodeSetup setup = HhhDataNodeSetup.apply(
        conf(null, "[RAM_DISK]" + planted.resolve("node1/dfs/ram")), GIB, true, "");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        setup::makeRamDirsPrivate);
    assertTrue(e.getMessage().contains(planted + " belongs to "), e.getMessage());
  }

  @Test
  void ramDisksAreMadeForThisUserAlone() throws Exception {
    Path ram = shm().resolve("hadoop-hpc-me/node1/dfs/ram");
    HhhDataNodeSetup.apply(conf(null, "[RAM_DISK]" + ram + ",[DISK]" + disk.resolve("d")), GIB,
        true, "").makeRamDirsPrivate();
    for (Path p = ram; !p.getFileName().toString().equals("shm"); p = p.getParent()) {
      assertEquals("rwx------", java.nio.file.attribute.PosixFilePermissions.toString(
          Files.getPosixFilePermissions(p)), p.toString());
    }
  }

  @Test
  void modesByOurNameAndHibds() {
    Configuration c = new Configuration(false);
    assertEquals(HhhMode.OFF, HhhMode.from(c));
    c.set(HhhConfigKeys.HIBD_MODE_KEY, "In-Memory");
    assertEquals(HhhMode.HHH_M, HhhMode.from(c));
    c.set(HhhConfigKeys.HIBD_MODE_KEY, "Default");
    assertEquals(HhhMode.HHH, HhhMode.from(c));
    c.set(HhhConfigKeys.MODE_KEY, "HHH-L");
    assertEquals(HhhMode.HHH_L, HhhMode.from(c), "ours wins over HiBD's");
    c.set(HhhConfigKeys.MODE_KEY, "fast");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> HhhMode.from(c));
    assertTrue(e.getMessage().contains(HhhConfigKeys.MODE_KEY + "=fast"), e.getMessage());
    c.unset(HhhConfigKeys.MODE_KEY);
    c.set(HhhConfigKeys.HIBD_MODE_KEY, "Turbo");
    e = assertThrows(IllegalArgumentException.class, () -> HhhMode.from(c));
    assertTrue(e.getMessage().contains(HhhConfigKeys.HIBD_MODE_KEY + "=Turbo"), e.getMessage());
  }

  @Test
  void inMemoryModeTakesATmpfsRamDiskAndAPersistentDir() {
    Configuration c = conf("hhh-m", "[RAM_DISK]" + SHM.resolve("hhh-test") + ",[SSD_DISK]"
        + disk.resolve("ssd") + ",[DISK]file://" + disk.resolve("hdd"));
    HhhDataNodeSetup s = HhhDataNodeSetup.apply(c, Long.MAX_VALUE, true, "");
    assertEquals(HhhMode.HHH_M, s.mode());
    assertEquals(1, s.ramDirs().size());
    assertEquals(2, s.persistentDirs().size());
    assertTrue(c.get("dfs.datanode.data.dir").contains("[SSD]" + disk.resolve("ssd")),
        "HiBD's [SSD_DISK] is rewritten for stock HDFS: " + c.get("dfs.datanode.data.dir"));
  }

  @Test
  void inMemoryModeWithoutARamDiskIsRefused() {
    IllegalArgumentException e = refused(conf("hhh-m", "[DISK]" + disk), Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("no [RAM_DISK] directory")
        && e.getMessage().contains("dfs.datanode.data.dir"), e.getMessage());
  }

  @Test
  void aDataDirThatIsNotLocalIsRefusedByName() {
    for (String bad : new String[] {"file://somehost/dev/shm/ram", "hdfs://nn:8020/ram",
        "file:/dev/shm/a b"}) {
      IllegalArgumentException e = refused(conf("hhh-m", "[RAM_DISK]" + bad + ",[DISK]"
          + disk.resolve("hdd")), Long.MAX_VALUE);
      assertTrue(e.getMessage().startsWith("dfs.datanode.data.dir: " + bad
          + " is not a local directory"), e.getMessage());
    }
    assertEquals(Paths.get("/dev/shm/ram"), HhhDataNodeSetup.local("file:///dev/shm/ram"));
  }

  @Test
  void aRamDiskOffTmpfsIsRefusedUnlessTheCheckIsOff() {
    Configuration c = conf("hhh-m", "[RAM_DISK]" + disk.resolve("ram") + ",[DISK]"
        + disk.resolve("hdd"));
    IllegalArgumentException e = refused(c, Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("not tmpfs")
        && e.getMessage().contains(HhhConfigKeys.RAM_DISK_CHECK_KEY), e.getMessage());
    c.setBoolean(HhhConfigKeys.RAM_DISK_CHECK_KEY, false);
    HhhDataNodeSetup.apply(c, Long.MAX_VALUE, true, "");
  }

  @Test
  void lockedMemoryMustBeSetLockableAndWithinTheLimit() {
    String dirs = "[RAM_DISK]" + SHM.resolve("hhh-test") + ",[DISK]" + disk;
    Configuration none = conf("hhh-m", dirs);
    none.unset("dfs.datanode.max.locked.memory");
    IllegalArgumentException e = refused(none, Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("dfs.datanode.max.locked.memory > 0"), e.getMessage());

    e = refused(conf("hhh-m", dirs), 64 * 1024);
    assertTrue(e.getMessage().contains("dfs.datanode.max.locked.memory=1g")
        && e.getMessage().contains("ulimit -l: 64 KiB"), e.getMessage());

    e = assertThrows(IllegalArgumentException.class,
        () -> HhhDataNodeSetup.apply(conf("hhh-m", dirs), GIB, false, "libhpcnative is not"
            + " loaded (no such file)"));
    assertTrue(e.getMessage().contains("native memory locking")
        && e.getMessage().contains("libhpcnative is not loaded"), e.getMessage());
  }

  @Test
  void nothingToPersistToIsRefused() {
    IllegalArgumentException e = refused(conf("hhh-m", "[RAM_DISK]" + SHM.resolve("hhh-test")),
        Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("persistent ([SSD] or [DISK])"), e.getMessage());
  }

  @Test
  void unknownTierTagsAreRefused() {
    IllegalArgumentException e = refused(conf("hhh", "[FLASH]" + disk), Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("[FLASH]") && e.getMessage().contains("storage type"),
        e.getMessage());
  }

  @Test
  void lustreModeAddsItsVolumeOnTheMount() throws Exception {
    Path lustre = Files.createDirectories(disk.resolve("lustre"));
    Configuration c = conf("hhh-l", "[RAM_DISK]" + SHM.resolve("hhh-test"));
    c.set(HhhConfigKeys.HIBD_LUSTRE_PATH_KEY, lustre.toString());
    c.set("dfs.datanode.address", "127.0.0.1:9866");
    HhhDataNodeSetup s = HhhDataNodeSetup.apply(c, Long.MAX_VALUE, true, "");
    assertEquals(1, s.persistentDirs().size());
    String volume = s.persistentDirs().get(0);
    assertTrue(volume.startsWith(lustre.toString()) && volume.endsWith("-9866"), volume);
    assertTrue(c.get("dfs.datanode.data.dir").endsWith(",[DISK]" + volume),
        c.get("dfs.datanode.data.dir"));
  }

  @Test
  void lustreModeNeedsItsPathAndKeepsPersistenceOnIt() throws Exception {
    Configuration c = conf("hhh-l", "[RAM_DISK]" + SHM.resolve("hhh-test"));
    IllegalArgumentException e = refused(c, Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("set " + HhhConfigKeys.LUSTRE_PATH_KEY), e.getMessage());

    c.set(HhhConfigKeys.LUSTRE_PATH_KEY, disk.resolve("missing").toString());
    e = refused(c, Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("is not a directory"), e.getMessage());

    Path lustre = Files.createDirectories(disk.resolve("lustre"));
    Configuration local = conf("hhh-l", "[RAM_DISK]" + SHM.resolve("hhh-test") + ",[DISK]"
        + disk.resolve("local"));
    local.set(HhhConfigKeys.LUSTRE_PATH_KEY, lustre.toString());
    e = refused(local, Long.MAX_VALUE);
    assertTrue(e.getMessage().contains("is not under " + HhhConfigKeys.LUSTRE_PATH_KEY),
        e.getMessage());
  }

  @Test
  void aBadRamThresholdStopsTheDataNodeAndAGoodOneIsLogged() {
    Configuration c = conf("hhh-m", "[RAM_DISK]" + SHM.resolve("hhh-test") + ",[DISK]" + disk);
    c.set(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY, "80");
    IllegalArgumentException e = refused(c, Long.MAX_VALUE);
    assertTrue(e.getMessage().startsWith(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY + "=80"),
        e.getMessage());
    c.set(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY, "0.8");
    c.set(HhhConfigKeys.RAM_FULL_ACTION_KEY, "fallback");
    HhhDataNodeSetup s = HhhDataNodeSetup.apply(c, Long.MAX_VALUE, true, "");
    assertTrue(s.notes().contains("RAM_DISK replicas use up to 80% of the locked memory, then go"
        + " to SSD/DISK"), s.notes().toString());
  }

  @Test
  void offLeavesEverythingButTheSsdSpelling() {
    Configuration c = conf(null, "[SSD_DISK]" + disk);
    c.unset("dfs.datanode.max.locked.memory");
    HhhDataNodeSetup s = HhhDataNodeSetup.apply(c, 0, false, "none");
    assertEquals(HhhMode.OFF, s.mode());
    assertEquals("[SSD]" + disk, c.get("dfs.datanode.data.dir"));
  }
}
