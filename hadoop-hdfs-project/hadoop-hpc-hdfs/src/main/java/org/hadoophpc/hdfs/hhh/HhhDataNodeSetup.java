/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.io.IOException;
import java.net.InetAddress;
import java.net.URI;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.DFSConfigKeys;
import org.apache.hadoop.net.NetUtils;
import org.hadoophpc.fs.PrivateDirs;

/**
 * What a DataNode needs before it starts in an HHH mode, checked and applied to its
 * configuration: tier tags (HiBD's {@code [SSD_DISK]} becomes {@code [SSD]}), a RAM_DISK
 * directory on tmpfs where the mode writes to memory, a locked-memory budget the process may
 * really lock, somewhere to persist to, and in hhh-l the volume on the Lustre mount. Every
 * problem is an {@link IllegalArgumentException} naming the key to fix.
 */
public final class HhhDataNodeSetup {
  private static final Pattern TAGGED = Pattern.compile("^\\s*\\[([A-Za-z_]+)\\](.*)$");

  private final HhhMode mode;
  private final List<String> ramDirs = new ArrayList<>();
  private final List<String> persistentDirs = new ArrayList<>();
  private final List<String> notes = new ArrayList<>();

  private HhhDataNodeSetup(HhhMode mode) {
    this.mode = mode;
  }

  /**
   * Checks {@code conf} for the configured mode and rewrites what it must in place
   * ({@code dfs.datanode.data.dir}).
   *
   * @param memlockLimit the bytes this process may lock (Long.MAX_VALUE: no limit applies)
   * @param canLock whether memory locking is available (libhpcnative or libhadoop loaded);
   *                {@code whyNot} says why when it is not
   */
  public static HhhDataNodeSetup apply(Configuration conf, long memlockLimit, boolean canLock,
      String whyNot) {
    HhhMode mode = HhhMode.from(conf);
    HhhDataNodeSetup setup = new HhhDataNodeSetup(mode);
    setup.readDataDirs(conf);
    if (!setup.ramDirs.isEmpty()) {
      RamTierLimit limit = RamTierLimit.from(conf); // a bad value stops the DataNode here
      if (!limit.isStock()) {
        setup.notes.add(limit.toString());
      }
    }
    if (mode == HhhMode.OFF) {
      return setup;
    }
    String modeText = HhhConfigKeys.MODE_KEY + "=" + mode.value();
    if (mode == HhhMode.HHH_L) {
      setup.lustreVolume(conf, modeText);
    }
    if (mode.inMemory() && setup.ramDirs.isEmpty()) {
      throw new IllegalArgumentException(modeText + " writes blocks to memory first but "
          + DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY + " has no [RAM_DISK] directory: add one"
          + " on a tmpfs, e.g. [RAM_DISK]/dev/shm/hdfs-data");
    }
    if (setup.persistentDirs.isEmpty()) {
      throw new IllegalArgumentException(modeText + " needs a persistent ([SSD] or [DISK])"
          + " directory in " + DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY
          + " to persist RAM_DISK replicas to");
    }
    if (!setup.ramDirs.isEmpty()) {
      setup.checkRamTier(conf, modeText, memlockLimit, canLock, whyNot);
    }
    return setup;
  }

  public HhhMode mode() {
    return mode;
  }

  /**
   * Makes each [RAM_DISK] directory this user's alone before the DataNode uses it: it usually
   * lies in a place everyone writes ({@code /dev/shm}), where another user could have made it,
   * or a directory above it, first ({@link PrivateDirs}).
   *
   * @throws IllegalArgumentException naming the directory, its owner and mode, and what to do
   */
  public void makeRamDirsPrivate() {
    for (String d : ramDirs) {
      try {
        PrivateDirs.create(local(d));
      } catch (IOException e) {
        throw new IllegalArgumentException(DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY
            + ": the [RAM_DISK] directory " + d + " cannot be made private: " + e.getMessage(),
            e);
      }
    }
  }

  public List<String> ramDirs() {
    return List.copyOf(ramDirs);
  }

  public List<String> persistentDirs() {
    return List.copyOf(persistentDirs);
  }

  /** What was changed or decided, for the DataNode's start-up log. */
  public List<String> notes() {
    return List.copyOf(notes);
  }

  private void readDataDirs(Configuration conf) {
    String key = DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY;
    String[] dirs = conf.getTrimmedStrings(key);
    List<String> rewritten = new ArrayList<>();
    boolean changed = false;
    for (String d : dirs) {
      Matcher m = TAGGED.matcher(d);
      StorageType type = StorageType.DEFAULT;
      String location = d;
      if (m.matches()) {
        String tag = m.group(1).toUpperCase(Locale.ROOT);
        location = m.group(2).trim();
        if (tag.equals("SSD_DISK")) {
          tag = "SSD"; // HiBD's spelling
          changed = true;
        }
        try {
          type = StorageType.valueOf(tag);
        } catch (IllegalArgumentException e) {
          throw new IllegalArgumentException(key + ": [" + m.group(1) + "] in '" + d
              + "' is not a storage type: use [RAM_DISK], [SSD] (or [SSD_DISK]), [DISK] or"
              + " [ARCHIVE]");
        }
        rewritten.add("[" + tag + "]" + location);
      } else {
        rewritten.add(d);
      }
      if (type == StorageType.RAM_DISK) {
        ramDirs.add(location);
      } else {
        persistentDirs.add(location);
      }
    }
    if (changed) {
      conf.set(key, String.join(",", rewritten));
      notes.add(key + ": [SSD_DISK] read as [SSD]");
    }
  }

  private void lustreVolume(Configuration conf, String modeText) {
    String path = conf.getTrimmed(HhhConfigKeys.LUSTRE_PATH_KEY,
        HhhConfigKeys.LUSTRE_PATH_DEFAULT);
    if (path.isEmpty()) {
      String hibd = conf.getTrimmed(HhhConfigKeys.HIBD_LUSTRE_PATH_KEY); // no default: unset
      path = hibd == null ? "" : hibd;
    }
    if (path.isEmpty()) {
      throw new IllegalArgumentException(modeText + " persists to the Lustre mount: set "
          + HhhConfigKeys.LUSTRE_PATH_KEY + " to a directory on it");
    }
    Path lustre = Paths.get(path).toAbsolutePath().normalize();
    if (!Files.isDirectory(lustre) || !Files.isWritable(lustre)) {
      throw new IllegalArgumentException(HhhConfigKeys.LUSTRE_PATH_KEY + "=" + path
          + (Files.isDirectory(lustre) ? " is not writable by this DataNode"
          : " is not a directory") + ": it must be a directory on the Lustre mount");
    }
    for (String d : persistentDirs) {
      if (!local(d).startsWith(lustre)) {
        throw new IllegalArgumentException(modeText + ": the persistent directory " + d
            + " in " + DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY + " is not under "
            + HhhConfigKeys.LUSTRE_PATH_KEY + "=" + path + "; list only [RAM_DISK]"
            + " directories there and the DataNode adds its volume on Lustre");
      }
    }
    if (persistentDirs.isEmpty()) {
      String host;
      try {
        host = InetAddress.getLocalHost().getHostName();
      } catch (IOException e) {
        host = "localhost";
      }
      int port = NetUtils.createSocketAddr(conf.getTrimmed(
          DFSConfigKeys.DFS_DATANODE_ADDRESS_KEY, DFSConfigKeys.DFS_DATANODE_ADDRESS_DEFAULT))
          .getPort();
      String volume = lustre.resolve(host + "-" + port).toString();
      persistentDirs.add(volume);
      String key = DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY;
      conf.set(key, conf.get(key) + ",[DISK]" + volume);
      notes.add("persisting to " + volume + " on the Lustre mount");
    }
  }

  private void checkRamTier(Configuration conf, String modeText, long memlockLimit,
      boolean canLock, String whyNot) {
    String lockedKey = DFSConfigKeys.DFS_DATANODE_MAX_LOCKED_MEMORY_KEY;
    long locked = conf.getLongBytes(lockedKey, 0);
    if (locked <= 0) {
      throw new IllegalArgumentException(modeText + " with [RAM_DISK] directories needs "
          + lockedKey + " > 0 (the bytes of RAM_DISK replicas the DataNode may hold, e.g. 1g):"
          + " without it stock HDFS silently writes every block to disk");
    }
    if (!canLock) {
      throw new IllegalArgumentException(lockedKey + "=" + conf.get(lockedKey) + " needs"
          + " native memory locking, which is not available: " + whyNot);
    }
    if (locked > memlockLimit) {
      throw new IllegalArgumentException(lockedKey + "=" + conf.get(lockedKey) + " (" + locked
          + " bytes) is more than this DataNode may lock (ulimit -l: " + memlockLimit / 1024
          + " KiB): raise the memlock limit (ulimit -l, or memlock in"
          + " /etc/security/limits.conf) or lower " + lockedKey);
    }
    if (!conf.getBoolean(HhhConfigKeys.RAM_DISK_CHECK_KEY,
        HhhConfigKeys.RAM_DISK_CHECK_DEFAULT)) {
      return;
    }
    for (String d : ramDirs) {
      Path p = local(d);
      String type = fileSystemType(p);
      if (!type.equals("tmpfs") && !type.equals("ramfs")) {
        throw new IllegalArgumentException(DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY
            + ": the [RAM_DISK] directory " + d + " is on " + type + ", not tmpfs: put it on a"
            + " tmpfs such as /dev/shm (or set " + HhhConfigKeys.RAM_DISK_CHECK_KEY
            + "=false)");
      }
    }
  }

  /** A data dir (a path or a file: URI) as a local path; anything else is refused, named. */
  static Path local(String dir) {
    try {
      if (dir.startsWith("file:")) {
        return Paths.get(URI.create(dir)).toAbsolutePath().normalize();
      }
      if (dir.matches("[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
        throw new IllegalArgumentException("a " + dir.substring(0, dir.indexOf(':'))
            + ": URI");
      }
      return Paths.get(dir).toAbsolutePath().normalize();
    } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
      throw new IllegalArgumentException(DFSConfigKeys.DFS_DATANODE_DATA_DIR_KEY + ": " + dir
          + " is not a local directory (" + e.getMessage() + "); give a path or a file:///"
          + " URI", e);
    }
  }

  /** The file system type of p, or of its nearest existing ancestor (the DataNode creates p). */
  static String fileSystemType(Path p) {
    Path at = p;
    while (at != null && !Files.exists(at)) {
      at = at.getParent();
    }
    if (at == null) {
      return "unknown";
    }
    try {
      FileStore store = Files.getFileStore(at);
      return store.type();
    } catch (IOException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }
}
