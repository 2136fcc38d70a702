/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.BlockMissingException;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.io.IOUtils;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.hadoophpc.nativeio.HpcCacheManipulator;
import org.hadoophpc.nativeio.HpcNative;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The HHH modes on a MiniDFSCluster whose DataNodes have a RAM_DISK volume on tmpfs
 * (/dev/shm) next to SSD/DISK volumes, prepared by {@link HpcDataNode#prepare} and with
 * {@link HhhNameNodePlugin} on the NameNode, as the tarball runs them. Every check is on what
 * a user sees: the storage type of each replica, the bytes read back, which writes succeed.
 */
class HhhModesIT {
  private static final int BLOCK = 1 << 20;
  private static final long WAIT_MS = 60_000;

  private Path ram;
  private Path work;
  private MiniDFSCluster cluster;

  @BeforeEach
  void dirs() throws IOException {
    assumeTrue(HpcNative.isAvailable(), () -> "libhpcnative not loaded: "
        + HpcNative.unavailabilityCause().getMessage());
    assumeTrue(HhhDataNodeSetup.fileSystemType(Paths.get("/dev/shm")).equals("tmpfs"),
        "/dev/shm is not a tmpfs here");
    ram = Files.createTempDirectory(Paths.get("/dev/shm"), "hhh-it-");
    work = Files.createDirectories(Paths.get(System.getProperty("test.build.data",
        "target/test-data"), "hhh-" + System.nanoTime())).toAbsolutePath();
  }

  @AfterEach
  void stop() throws IOException {
    if (cluster != null) {
      cluster.shutdown();
    }
    if (ram != null) {
      deleteTree(ram);
    }
  }

  private Configuration conf(HhhMode mode, String dataDirs) {
    Configuration conf = new HdfsConfiguration();
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, work.resolve("cluster").toString());
    conf.set(HhhConfigKeys.MODE_KEY, mode.value());
    conf.set("dfs.namenode.plugins", HhhNameNodePlugin.class.getName());
    conf.setLong("dfs.blocksize", BLOCK);
    conf.setInt("dfs.replication", 1);
    conf.set("dfs.datanode.max.locked.memory", "64m");
    conf.setInt("dfs.datanode.lazywriter.interval.sec", 1);
    conf.setInt("dfs.heartbeat.interval", 1);
    if (dataDirs != null) {
      conf.set("dfs.datanode.data.dir", dataDirs);
    }
    return conf;
  }

  /** One DataNode with the configured dirs, prepared as bin/hdfs datanode prepares it. */
  private FileSystem start(Configuration conf) throws Exception {
    HpcDataNode.prepare(conf);
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).manageDataDfsDirs(false)
        .build();
    cluster.waitActive();
    FileSystem fs = cluster.getFileSystem();
    waitForRootPolicy(fs, HhhMode.from(conf).rootPolicy());
    return fs;
  }

  @Test
  void inMemoryModeWritesToRamDiskAndPersistsLazilyAcrossARestart() throws Exception {
    Path disk = work.resolve("disk");
    FileSystem fs = start(conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]" + disk));
    assertTrue(NativeIO.POSIX.getCacheManipulator() instanceof HpcCacheManipulator);

    byte[] data = bytes(4 * BLOCK, 1);
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/m/data");
    write(fs, file, data);
    assertArrayEquals(data, read(fs, file), "read after write");
    assertEquals(List.of(StorageType.RAM_DISK), tiers(fs, file), "every block in memory");
    assertEquals("LAZY_PERSIST", fs.getStoragePolicy(file).getName());

    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream();
    assertEquals(0, new HhhReport(fs.getConf(), new java.io.PrintStream(text, true, "UTF-8"))
        .run(new String[] {"-report"}));
    String report = text.toString("UTF-8");
    assertTrue(report.contains("HHH mode: hhh-m (dfs.hpc.hhh.mode); storage policy of /:"
        + " LAZY_PERSIST"), report);
    assertTrue(report.lines().anyMatch(l -> l.startsWith("  RAM_DISK ") && l.endsWith(" 4")),
        "4 replicas on RAM_DISK:\n" + report);
    assertTrue(report.contains("used of 64.0 MB"), "the locked-memory budget:\n" + report);

    waitForPersisted(disk, 4);
    // what an admin watches: the DataNode's stock DataNodeActivity bean counts the move
    awaitActivity("RamDiskBlocksLazyPersisted", 4);
    restartDataNodeLosingRam();
    waitForLocations(fs, file, "every block on DISK", b -> allOn(b, StorageType.DISK));
    assertArrayEquals(data, read(fs, file), "the persisted copies after the RAM disk is gone");
    assertEquals(List.of(StorageType.DISK), tiers(fs, file));
  }

  @Test
  void aCrashBeforePersistenceLosesTheUnpersistedBlocksLoudly() throws Exception {
    Configuration conf = conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]"
        + work.resolve("disk"));
    conf.setInt("dfs.datanode.lazywriter.interval.sec", 3600); // nothing persists in time
    FileSystem fs = start(conf);
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/m/recent");
    write(fs, file, bytes(2 * BLOCK, 2));
    assertEquals(List.of(StorageType.RAM_DISK), tiers(fs, file));

    restartDataNodeLosingRam();
    waitForLocations(fs, file, "no replica left", HhhModesIT::noReplicas);
    // What the user guide says: blocks not yet persisted are lost with the node's memory, and a
    // read says which block is missing rather than returning anything.
    BlockMissingException e = assertThrows(BlockMissingException.class, () -> read(fs, file));
    assertTrue(e.getMessage().contains("Could not obtain block"), e.getMessage());
  }

  @Test
  void aFullRamTierEvictsPersistedReplicasOrFallsBackWithoutFailingWrites() throws Exception {
    Path disk = work.resolve("disk");
    Configuration conf = conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]" + disk);
    conf.set("dfs.datanode.max.locked.memory", String.valueOf(4 * BLOCK));
    conf.set(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY, "0.75"); // 3 blocks; evict (the default)
    FileSystem fs = start(conf);

    // Nothing persisted yet when the tier fills: blocks past its threshold fall back to DISK.
    byte[] first = bytes(5 * BLOCK, 3);
    org.apache.hadoop.fs.Path a = new org.apache.hadoop.fs.Path("/m/first");
    write(fs, a, first);
    List<StorageType> perBlock = tiersPerBlock(fs, a);
    assertEquals(5, perBlock.size());
    assertTrue(perBlock.contains(StorageType.RAM_DISK) && perBlock.contains(StorageType.DISK),
        perBlock.toString());
    assertTrue(perBlock.stream().filter(t -> t == StorageType.RAM_DISK).count() <= 3,
        "the threshold, not the whole locked memory: " + perBlock);

    // Once they are persisted, new blocks get memory again by evicting the persisted ones.
    waitForPersisted(disk, perBlock.stream().filter(t -> t == StorageType.RAM_DISK).count());
    byte[] second = bytes(2 * BLOCK, 4);
    org.apache.hadoop.fs.Path b = new org.apache.hadoop.fs.Path("/m/second");
    write(fs, b, second);
    assertEquals(List.of(StorageType.RAM_DISK), tiers(fs, b), "evicted to make room");
    awaitActivity("RamDiskBlocksEvicted", 1);
    assertArrayEquals(first, read(fs, a));
    assertArrayEquals(second, read(fs, b));
  }

  @Test
  void aRamTierSetToFallBackKeepsItsReplicasAndWritesNewBlocksToDisk() throws Exception {
    Path disk = work.resolve("disk");
    Configuration conf = conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]" + disk);
    conf.set("dfs.datanode.max.locked.memory", String.valueOf(4 * BLOCK));
    conf.set(HhhConfigKeys.RAM_USAGE_THRESHOLD_KEY, "0.5"); // 2 blocks
    conf.set(HhhConfigKeys.RAM_FULL_ACTION_KEY, "fallback");
    FileSystem fs = start(conf);

    byte[] first = bytes(5 * BLOCK, 7);
    org.apache.hadoop.fs.Path a = new org.apache.hadoop.fs.Path("/m/first");
    write(fs, a, first);
    List<StorageType> perBlock = tiersPerBlock(fs, a);
    long inRam = perBlock.stream().filter(t -> t == StorageType.RAM_DISK).count();
    assertTrue(inRam >= 1 && inRam <= 2, "at most half of the locked memory: " + perBlock);

    // Even with every RAM_DISK replica persisted (stock would evict them now), new blocks go to
    // DISK and the replicas in memory stay there.
    waitForPersisted(disk, inRam);
    byte[] second = bytes(2 * BLOCK, 8);
    org.apache.hadoop.fs.Path b = new org.apache.hadoop.fs.Path("/m/second");
    write(fs, b, second);
    assertEquals(List.of(StorageType.DISK), tiers(fs, b), "fell back, nothing evicted");
    assertEquals(perBlock, tiersPerBlock(fs, a), "the first file's replicas did not move");
    assertArrayEquals(first, read(fs, a));
    assertArrayEquals(second, read(fs, b));
  }

  @Test
  void lustreModeFilesSurviveLosingTheInMemoryCopy() throws Exception {
    Path lustre = Files.createDirectories(work.resolve("lustre"));
    Configuration conf = conf(HhhMode.HHH_L, "[RAM_DISK]" + ram);
    conf.set(HhhConfigKeys.LUSTRE_PATH_KEY, lustre.toString());
    FileSystem fs = start(conf);

    byte[] data = bytes(3 * BLOCK + 12345, 5);
    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/l/data");
    write(fs, file, data);
    assertEquals(List.of(StorageType.RAM_DISK), tiers(fs, file));
    waitForPersisted(lustre, 4);

    restartDataNodeLosingRam();
    waitForLocations(fs, file, "every block on DISK", b -> allOn(b, StorageType.DISK));
    assertArrayEquals(data, read(fs, file), "read back from the copies on the Lustre mount");
    assertEquals(List.of(StorageType.DISK), tiers(fs, file));
  }

  @Test
  void appendWorksWhereThePolicyAllowsItAndIsRefusedIntactOnLazyFiles() throws Exception {
    FileSystem fs = start(conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]"
        + work.resolve("disk")));
    org.apache.hadoop.fs.Path lazy = new org.apache.hadoop.fs.Path("/m/lazy");
    byte[] data = bytes(BLOCK + 7, 6);
    write(fs, lazy, data);
    assertArrayEquals(data, read(fs, lazy), "an odd-length file reads back from RAM_DISK");
    assertEquals(List.of(StorageType.RAM_DISK), tiers(fs, lazy));
    IOException e = assertThrows(IOException.class, () -> fs.append(lazy).close());
    assertTrue(e.getMessage().contains("Cannot append to lazy persist file"), e.getMessage());
    assertArrayEquals(data, read(fs, lazy), "a refused append changes nothing");

    // The user guide's answer: files that grow live in a directory with a durable policy.
    org.apache.hadoop.fs.Path logs = new org.apache.hadoop.fs.Path("/logs");
    fs.mkdirs(logs);
    fs.setStoragePolicy(logs, "HOT");
    org.apache.hadoop.fs.Path log = new org.apache.hadoop.fs.Path(logs, "app.log");
    byte[] head = bytes(1000, 7);
    byte[] tail = bytes(BLOCK + 3, 8);
    write(fs, log, head);
    try (FSDataOutputStream out = fs.append(log)) {
      out.write(tail);
    }
    byte[] both = Arrays.copyOf(head, head.length + tail.length);
    System.arraycopy(tail, 0, both, head.length, tail.length);
    assertArrayEquals(both, read(fs, log));
    assertEquals(List.of(StorageType.DISK), tiers(fs, log));
  }

  @Test
  void hhhModePutsTheFirstReplicaOnSsdAndAppends() throws Exception {
    Configuration conf = conf(HhhMode.HHH, null);
    conf.setInt("dfs.replication", 2);
    HpcDataNode.prepare(conf);
    cluster = new MiniDFSCluster.Builder(conf).numDataNodes(2)
        .storageTypes(new StorageType[] {StorageType.SSD, StorageType.DISK}).build();
    cluster.waitActive();
    FileSystem fs = cluster.getFileSystem();
    waitForRootPolicy(fs, "ONE_SSD");

    org.apache.hadoop.fs.Path file = new org.apache.hadoop.fs.Path("/h/data");
    byte[] data = bytes(3 * BLOCK, 9);
    write(fs, file, data);
    for (BlockLocation b : fs.getFileBlockLocations(file, 0, data.length)) {
      List<StorageType> types = new ArrayList<>(Arrays.asList(b.getStorageTypes()));
      types.sort(null);
      assertEquals(List.of(StorageType.SSD, StorageType.DISK), types, "block at "
          + b.getOffset());
    }
    byte[] more = bytes(BLOCK / 2, 10);
    try (FSDataOutputStream out = fs.append(file)) {
      out.write(more);
    }
    byte[] both = Arrays.copyOf(data, data.length + more.length);
    System.arraycopy(more, 0, both, data.length, more.length);
    assertArrayEquals(both, read(fs, file), "read after append");
  }

  @Test
  void theEntryPointsJoinReturnsWhenTheDataNodeStops() throws Exception {
    start(conf(HhhMode.HHH_M, "[RAM_DISK]" + ram + ",[DISK]" + work.resolve("disk")));
    org.apache.hadoop.hdfs.server.datanode.DataNode dn = cluster.getDataNodes().get(0);
    Thread joiner = new Thread(
        () -> org.apache.hadoop.hdfs.server.datanode.HpcDataNodeBridge.join(dn), "joiner");
    joiner.start();
    joiner.join(2000);
    assertTrue(joiner.isAlive(), "join() waits while the DataNode runs");
    dn.shutdown();
    joiner.join(WAIT_MS);
    assertTrue(!joiner.isAlive(), "join() returned after shutdown");
  }

  // ---- helpers ----

  /**
   * Waits (bounded) until the DataNode's stock {@code DataNodeActivity} bean, read over JMX as an
   * admin would, shows {@code attribute} at least {@code atLeast} (the user guide's HHH metrics).
   */
  private static void awaitActivity(String attribute, long atLeast) throws Exception {
    MBeanServer mbs = ManagementFactory.getPlatformMBeanServer();
    ObjectName pattern = new ObjectName("Hadoop:service=DataNode,name=DataNodeActivity-*");
    long seen = -1;
    for (int i = 0; i < 100 && seen < atLeast; i++) {
      seen = 0;
      for (ObjectName n : mbs.queryNames(pattern, null)) {
        seen += ((Number) mbs.getAttribute(n, attribute)).longValue();
      }
      if (seen < atLeast) {
        Thread.sleep(200);
      }
    }
    assertTrue(seen >= atLeast, "DataNodeActivity " + attribute + " = " + seen + ", want >= "
        + atLeast);
  }

  private void restartDataNodeLosingRam() throws Exception {
    MiniDFSCluster.DataNodeProperties dn = cluster.stopDataNode(0);
    try (Stream<Path> s = Files.list(ram)) {
      for (Path p : (Iterable<Path>) s::iterator) {
        deleteTree(p); // what a reboot does to a tmpfs
      }
    }
    assertTrue(cluster.restartDataNode(dn, true));
    cluster.waitActive();
    cluster.triggerBlockReports();
  }

  /** Waits (bounded) until the NameNode's view of f's blocks matches what a restart left. */
  private static void waitForLocations(FileSystem fs, org.apache.hadoop.fs.Path f,
      String what, java.util.function.Predicate<BlockLocation[]> done) throws Exception {
    long end = System.currentTimeMillis() + WAIT_MS;
    BlockLocation[] now;
    while (!done.test(now = fs.getFileBlockLocations(f, 0, fs.getFileStatus(f).getLen()))) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError(f + ": " + what + " not reached: " + Arrays.toString(now));
      }
      Thread.sleep(200);
    }
  }

  private static boolean noReplicas(BlockLocation[] blocks) {
    try {
      for (BlockLocation b : blocks) {
        if (b.getHosts().length > 0) {
          return false;
        }
      }
      return true;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static boolean allOn(BlockLocation[] blocks, StorageType type) {
    return Arrays.stream(blocks).allMatch(b -> b.getStorageTypes().length == 1
        && b.getStorageTypes()[0] == type);
  }

  private static void waitForRootPolicy(FileSystem fs, String policy) throws Exception {
    long end = System.currentTimeMillis() + WAIT_MS;
    org.apache.hadoop.fs.Path root = new org.apache.hadoop.fs.Path("/");
    while (!policy.equals(fs.getStoragePolicy(root).getName())) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError("HhhNameNodePlugin did not set / to " + policy + "; it is "
            + fs.getStoragePolicy(root).getName());
      }
      Thread.sleep(100);
    }
  }

  /** Waits until {@code blocks} block files sit in lazypersist/ directories under dir. */
  private static void waitForPersisted(Path dir, long blocks) throws Exception {
    long end = System.currentTimeMillis() + WAIT_MS;
    long found;
    while ((found = persisted(dir)) < blocks) {
      if (System.currentTimeMillis() > end) {
        throw new AssertionError(found + " of " + blocks + " blocks persisted under " + dir);
      }
      Thread.sleep(200);
    }
  }

  private static long persisted(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().matches("blk_[0-9]+")
          && p.toString().contains(File.separator + "lazypersist" + File.separator)).count();
    }
  }

  private static List<StorageType> tiers(FileSystem fs, org.apache.hadoop.fs.Path f)
      throws IOException {
    return tiersPerBlock(fs, f).stream().distinct().toList();
  }

  private static List<StorageType> tiersPerBlock(FileSystem fs, org.apache.hadoop.fs.Path f)
      throws IOException {
    List<StorageType> out = new ArrayList<>();
    long len = fs.getFileStatus(f).getLen();
    for (BlockLocation b : fs.getFileBlockLocations(f, 0, len)) {
      assertEquals(1, b.getStorageTypes().length, "one replica per block here");
      out.add(b.getStorageTypes()[0]);
    }
    return out;
  }

  private static byte[] bytes(int n, long seed) {
    byte[] b = new byte[n];
    new Random(seed).nextBytes(b);
    return b;
  }

  private static void write(FileSystem fs, org.apache.hadoop.fs.Path f, byte[] data)
      throws IOException {
    try (FSDataOutputStream out = fs.create(f)) {
      out.write(data);
    }
  }

  private static byte[] read(FileSystem fs, org.apache.hadoop.fs.Path f) throws IOException {
    byte[] back = new byte[(int) fs.getFileStatus(f).getLen()];
    try (FSDataInputStream in = fs.open(f)) {
      IOUtils.readFully(in, back, 0, back.length);
    }
    return back;
  }

  private static void deleteTree(Path p) throws IOException {
    if (!Files.exists(p)) {
      return;
    }
    try (Stream<Path> s = Files.walk(p)) {
      for (Path q : (Iterable<Path>) s.sorted((x, y) -> y.compareTo(x))::iterator) {
        Files.deleteIfExists(q);
      }
    }
  }
}
