/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileAlreadyExistsException;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.hadoophpc.nativeio.HpcNative;
import org.hadoophpc.nativeio.LustreApi;
import org.hadoophpc.nativeio.LustreLayout;
import org.hadoophpc.nativeio.NativeIoException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Lustre binding against rdma-native's liblustreapi test double: a directory holding
 * {@code .lustre-double} stands in for the Lustre mount (4 OSTs, 1 MiB stripes, 1 stripe by
 * default), so the real JNI calls and the real xattr-kept layouts are exercised.
 */
class LustreFileSystemTest {
  private static final long MIB = 1 << 20;

  @TempDir
  File tmp;
  private File mount;
  private String library;
  private LustreFileSystem fs;

  static String doubleLibrary() {
    assumeTrue(HpcNative.isAvailable(), () -> "libhpcnative not loaded (a -Dnative.skip=true "
        + "build?): " + HpcNative.unavailabilityCause().getMessage());
    String dir = System.getProperty("hadoop.hpc.native.test.lib.dir", "");
    File lib = new File(dir, "liblustreapi_double.so");
    assumeTrue(lib.isFile(), () -> lib + " not built (a -Dnative.skip=true build?)");
    return lib.getAbsolutePath();
  }

  static File standInMount(File parent, String marker) throws IOException {
    File mount = new File(parent, "lustre");
    assertTrue(mount.mkdirs());
    Files.writeString(new File(mount, ".lustre-double").toPath(), marker);
    return mount;
  }

  @BeforeEach
  void setUp() throws IOException {
    library = doubleLibrary();
    mount = standInMount(tmp, "osts=4 stripe_size=1048576 stripe_count=1\n");
  }

  @AfterEach
  void tearDown() throws IOException {
    if (fs != null) {
      fs.close();
    }
  }

  private Configuration conf() {
    Configuration conf = new Configuration(false);
    conf.set(LustreConfigKeys.MOUNT_KEY, mount.getPath());
    conf.set(LustreConfigKeys.LIBRARY_KEY, library);
    conf.setLong("fs.local.block.size", MIB);
    return conf;
  }

  private LustreFileSystem open(Configuration conf) throws IOException {
    LustreFileSystem opened = new LustreFileSystem();
    opened.initialize(URI.create("file:///"), conf);
    fs = opened;
    return opened;
  }

  private static byte[] write(FileSystem fs, Path p, int length) throws IOException {
    byte[] data = new byte[length];
    new Random(length).nextBytes(data);
    try (FSDataOutputStream out = fs.create(p, true)) {
      out.write(data);
    }
    return data;
  }

  private static LustreLayout layout(File f) throws NativeIoException {
    return LustreApi.probe(doubleLibrary()).layout(f.getAbsolutePath());
  }

  @Test
  void filesOnTheMountGetTheConfiguredStripesAndStripeSizedBlocks() throws IOException {
    Configuration conf = conf();
    conf.set(LustreConfigKeys.STRIPE_SIZE_KEY, "2m");
    conf.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, 3);
    LustreFileSystem lfs = open(conf);
    assertTrue(lfs.lustreRaw().layoutsEnabled(), lfs.lustreRaw().lustreState());
    assertTrue(lfs.lustreRaw().lustreState().startsWith("Lustre layouts on under "
        + mount.getCanonicalPath()), lfs.lustreRaw().lustreState());

    Path p = new Path(mount.getPath(), "data/part-0");
    byte[] data = write(lfs, p, (int) (5 * MIB + 100));

    LustreLayout layout = layout(new File(mount, "data/part-0"));
    assertEquals(2 * MIB, layout.stripeSize());
    assertEquals(3, layout.stripeCount());
    assertEquals(2 * MIB, lfs.getFileStatus(p).getBlockSize());
    assertEquals(2 * MIB, lfs.listStatus(p.getParent())[0].getBlockSize());
    assertEquals(1, layout(new File(mount, "data/.part-0.crc")).stripeCount(),
        "checksum files keep the directory default");
    byte[] back = new byte[data.length];
    try (FSDataInputStream in = lfs.open(p)) {
      in.readFully(back);
    }
    assertArrayEquals(data, back);
  }

  @Test
  void blockSizeIsAMultipleOfTheStripeAtLeastTheLocalBlockSize() throws IOException {
    Configuration conf = conf();
    conf.setLong("fs.local.block.size", 3 * MIB);
    LustreFileSystem lfs = open(conf);
    Path p = new Path(mount.getPath(), "f");
    write(lfs, p, 1000);
    assertEquals(3 * MIB, lfs.getFileStatus(p).getBlockSize());
    assertEquals(4 * MIB, lfs.lustreRaw().blockSizeFor(2 * MIB));
    assertEquals(8 * MIB, lfs.lustreRaw().blockSizeFor(8 * MIB));
  }

  @Test
  void blockLocationsNameTheHostsNextToEachBlocksOsts() throws IOException {
    Configuration conf = conf();
    conf.set(LustreConfigKeys.STRIPE_SIZE_KEY, "1m");
    conf.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, 2);
    conf.set(LustreConfigKeys.OST_HOSTS_KEY, "0=h0,1=h1, 2-3=h23;h23b");
    LustreFileSystem lfs = open(conf);
    Path p = new Path(mount.getPath(), "striped");
    write(lfs, p, (int) (5 * MIB + 100));
    LustreLayout layout = layout(new File(mount, "striped"));

    BlockLocation[] blocks = lfs.getFileBlockLocations(lfs.getFileStatus(p), 0, 6 * MIB);
    assertEquals(6, blocks.length);
    for (int i = 0; i < blocks.length; i++) {
      assertEquals(i * MIB, blocks[i].getOffset());
      assertEquals(i < 5 ? MIB : 100, blocks[i].getLength());
      long ost = layout.ost(i % 2);
      List<String> expected = ost < 2 ? List.of("h" + ost) : List.of("h23", "h23b");
      assertEquals(expected, Arrays.asList(blocks[i].getHosts()), "block " + i);
    }
    // a range inside the file gets only its blocks
    BlockLocation[] middle = lfs.getFileBlockLocations(lfs.getFileStatus(p), 2 * MIB + 5, 10);
    assertEquals(1, middle.length);
    assertEquals(2 * MIB, middle[0].getOffset());
  }

  @Test
  void aBlockOverSeveralOstsListsTheirHostsMostBytesFirst() throws IOException {
    Configuration conf = conf();
    conf.setLong("fs.local.block.size", 2 * MIB);
    conf.set(LustreConfigKeys.OST_HOSTS_KEY, "1=a,3=b,5=c");
    LustreFileSystem lfs = open(conf);
    LustreLayout layout = new LustreLayout(MIB, 3, new long[] {1, 3, 5});
    // 2 MiB blocks of a 3.5 MiB file: [0, 2) is stripes 0 and 1 (1 MiB each); [2, 3.5) is
    // 1 MiB of stripe 2 and 0.5 MiB of stripe 0
    BlockLocation[] blocks = lfs.lustreRaw().locations(layout, 7 * MIB / 2, 0, 7 * MIB / 2);
    assertEquals(2, blocks.length);
    assertEquals(List.of("a", "b"), Arrays.asList(blocks[0].getHosts()));
    assertEquals(List.of("c", "a"), Arrays.asList(blocks[1].getHosts()));
    assertEquals(MIB * 3 / 2, blocks[1].getLength());
    assertArrayEquals(new long[] {MIB / 4, MIB, MIB / 4},
        layout.bytesPerStripe(3 * MIB / 4, 3 * MIB / 2));
  }

  @Test
  void withoutAnOstMapLocationsStayStockButBlocksFollowTheStripes() throws IOException {
    LustreFileSystem lfs = open(conf());
    Path p = new Path(mount.getPath(), "f");
    write(lfs, p, (int) (3 * MIB));
    assertEquals(MIB, lfs.getFileStatus(p).getBlockSize());
    BlockLocation[] blocks = lfs.getFileBlockLocations(lfs.getFileStatus(p), 0, 3 * MIB);
    assertEquals(List.of("localhost"), Arrays.asList(blocks[0].getHosts()));
  }

  @Test
  void pathsOffTheMountArePlainLocalFiles() throws IOException {
    Configuration conf = conf();
    conf.set(LustreConfigKeys.STRIPE_SIZE_KEY, "2m");
    conf.setLong("fs.local.block.size", 5 * MIB);
    LustreFileSystem lfs = open(conf);
    File outside = new File(tmp, "elsewhere");
    Path p = new Path(outside.getPath(), "f");
    write(lfs, p, 1000);
    assertEquals(5 * MIB, lfs.getFileStatus(p).getBlockSize());
    NativeIoException e = assertThrows(NativeIoException.class,
        () -> layout(new File(outside, "f")));
    assertTrue(LustreApi.notOnLustre(e), e.getMessage());
  }

  @Test
  void aMountThatIsNotOnLustreSaysSoAndStaysPosix() throws IOException {
    File plain = new File(tmp, "plain");
    assertTrue(plain.mkdirs());
    Configuration conf = conf();
    conf.set(LustreConfigKeys.MOUNT_KEY, plain.getPath());
    conf.set(LustreConfigKeys.STRIPE_SIZE_KEY, "2m");
    LustreFileSystem lfs = open(conf);
    assertFalse(lfs.lustreRaw().layoutsEnabled());
    assertEquals("Lustre layouts off under " + plain.getCanonicalPath()
        + ": not on a Lustre file system (llapi_layout_get_by_path failed: errno 25"
        + " (Inappropriate ioctl for device)); plain POSIX behaviour",
        lfs.lustreRaw().lustreState());
    Path p = new Path(plain.getPath(), "f");
    write(lfs, p, 10);
    assertEquals(MIB, lfs.getFileStatus(p).getBlockSize());
  }

  @Test
  void aMissingLibrarySaysWhichAndStaysPosix() throws IOException {
    Configuration conf = conf();
    conf.set(LustreConfigKeys.LIBRARY_KEY, "/nonexistent/liblustreapi.so.1");
    LustreFileSystem lfs = open(conf);
    assertFalse(lfs.lustreRaw().layoutsEnabled());
    String state = lfs.lustreRaw().lustreState();
    assertTrue(state.startsWith("Lustre layouts off under " + mount.getCanonicalPath()
        + ": liblustreapi not found (dlopen /nonexistent/liblustreapi.so.1"), state);
    write(lfs, new Path(mount.getPath(), "f"), 10);
  }

  @Test
  void badSettingsAreRefusedNamingTheKey() {
    Configuration unaligned = conf();
    unaligned.setLong(LustreConfigKeys.STRIPE_SIZE_KEY, 1000);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> open(unaligned));
    assertTrue(e.getMessage().startsWith(LustreConfigKeys.STRIPE_SIZE_KEY + "=1000: "),
        e.getMessage());

    Configuration negative = conf();
    negative.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, -2);
    assertThrows(IllegalArgumentException.class, () -> open(negative));

    Configuration missing = conf();
    missing.set(LustreConfigKeys.MOUNT_KEY, new File(tmp, "absent").getPath());
    FileNotFoundException f = assertThrows(FileNotFoundException.class, () -> open(missing));
    assertTrue(f.getMessage().contains(LustreConfigKeys.MOUNT_KEY + "=" + tmp + "/absent: "
        + "no such directory"), f.getMessage());

    Configuration badMap = conf();
    badMap.set(LustreConfigKeys.OST_HOSTS_KEY, "0=a,x=b");
    e = assertThrows(IllegalArgumentException.class, () -> open(badMap));
    assertEquals(LustreConfigKeys.OST_HOSTS_KEY + ": bad entry 'x=b': OST indexes must be "
        + "numbers", e.getMessage());
  }

  @Test
  void overwriteRelaysTheFileOutButNeverClobbersWithoutIt() throws IOException {
    Configuration conf = conf();
    conf.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, 2);
    LustreFileSystem lfs = open(conf);
    Path p = new Path(mount.getPath(), "f");
    write(lfs, p, 10);
    assertThrows(FileAlreadyExistsException.class, () -> lfs.create(p, false));
    assertEquals(10, lfs.getFileStatus(p).getLen(), "refused create left the file alone");
    write(lfs, p, 20);
    assertEquals(20, lfs.getFileStatus(p).getLen());
    assertEquals(2, layout(new File(mount, "f")).stripeCount());
  }

  @Test
  void hadoopLustrePrintsLayoutBlockSizeAndHosts() throws Exception {
    Configuration conf = conf();
    conf.set("fs.file.impl", LustreFileSystem.class.getName());
    conf.set(LustreConfigKeys.STRIPE_SIZE_KEY, "1m");
    conf.setInt(LustreConfigKeys.STRIPE_COUNT_KEY, 2);
    conf.set(LustreConfigKeys.OST_HOSTS_KEY, "0-3=here");
    Path p = new Path(mount.getPath(), "f");
    write(open(conf), p, (int) (MIB + 1));
    LustreLayout layout = layout(new File(mount, "f"));

    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    int rc = new LustreTool(conf, new java.io.PrintStream(bytes, true, "UTF-8"))
        .run(new String[] {p.toString(), new File(tmp, "absent").getPath()});
    String[] lines = bytes.toString("UTF-8").split("\n");
    assertEquals(1, rc, "an unreadable path makes the exit code 1");
    assertEquals(p + ": " + layout, lines[0]);
    assertEquals("  length " + (MIB + 1) + ", block size " + MIB, lines[1]);
    assertEquals("  block 0+" + MIB + ": hosts here", lines[2]);
    assertEquals("  block " + MIB + "+1: hosts here", lines[3]);
    assertTrue(lines[4].startsWith(new File(tmp, "absent").getPath() + ": "), lines[4]);
    assertEquals(5, lines.length);

    Configuration off = conf();
    off.set("fs.file.impl", LustreFileSystem.class.getName());
    off.set(LustreConfigKeys.LIBRARY_KEY, "/nonexistent/liblustreapi.so.1");
    bytes.reset();
    assertEquals(2, new LustreTool(off, new java.io.PrintStream(bytes, true, "UTF-8"))
        .run(new String[] {p.toString()}));
    assertTrue(bytes.toString("UTF-8").startsWith("Lustre layouts off under "),
        bytes.toString("UTF-8"));

    Configuration stock = conf();
    bytes.reset();
    assertEquals(2, new LustreTool(stock, new java.io.PrintStream(bytes, true, "UTF-8"))
        .run(new String[] {p.toString()}));
    assertTrue(bytes.toString("UTF-8").contains("not the Lustre binding: set fs.file.impl="
        + LustreFileSystem.class.getName()), bytes.toString("UTF-8"));
  }

  @Test
  void checksumSideFilesAreWrittenUnlessTurnedOff() throws IOException {
    LustreFileSystem withCrc = open(conf());
    write(withCrc, new Path(mount.getPath(), "a"), 100);
    assertTrue(new File(mount, ".a.crc").isFile());

    Configuration conf = conf();
    conf.setBoolean(LustreConfigKeys.CHECKSUM_FILES_KEY, false);
    withCrc.close();
    LustreFileSystem without = open(conf);
    byte[] data = write(without, new Path(mount.getPath(), "b"), 100);
    assertFalse(new File(mount, ".b.crc").exists());
    byte[] back = new byte[data.length];
    try (FSDataInputStream in = without.open(new Path(mount.getPath(), "b"))) {
      in.readFully(back);
    }
    assertArrayEquals(data, back);
  }

  @Test
  void theOstHostMapAcceptsRangesSeveralHostsAndAFile() throws IOException {
    OstHostMap map = OstHostMap.parse(List.of("0-2=a;b", " 2 = c ", "# comment", ""), "k");
    assertEquals(List.of("a", "b"), map.hosts(0));
    assertEquals(List.of("a", "b", "c"), map.hosts(2));
    assertEquals(List.of(), map.hosts(3));
    assertThrows(IllegalArgumentException.class, () -> OstHostMap.parse(List.of("3-1=a"), "k"));
    assertThrows(IllegalArgumentException.class, () -> OstHostMap.parse(List.of("3="), "k"));

    File file = new File(tmp, "osts");
    Files.write(file.toPath(), List.of("# ost host", "0 =n0", "1=n1"), StandardCharsets.UTF_8);
    Configuration conf = conf();
    conf.set(LustreConfigKeys.OST_HOSTS_FILE_KEY, file.getPath());
    LustreFileSystem lfs = open(conf);
    assertTrue(lfs.lustreRaw().lustreState().endsWith("2 OSTs mapped to hosts)"),
        lfs.lustreRaw().lustreState());
  }
}
