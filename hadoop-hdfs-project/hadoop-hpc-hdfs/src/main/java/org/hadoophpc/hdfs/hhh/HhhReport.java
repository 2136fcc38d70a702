/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.hhh;

import java.io.IOException;
import java.io.PrintStream;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.BlockStoragePolicySpi;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.StorageType;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.protocol.DatanodeInfo;
import org.apache.hadoop.hdfs.protocol.HdfsConstants.DatanodeReportType;
import org.apache.hadoop.hdfs.server.protocol.DatanodeStorageReport;
import org.apache.hadoop.hdfs.server.protocol.StorageReport;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;

/**
 * {@code hdfs hhh -report [-path P]}: the active HHH mode, the storage policy of {@code /}, and
 * per live DataNode and tier the capacity, used and remaining bytes and the replicas on it
 * (counted over the files under P, default {@code /}), with the DataNode's locked memory (its
 * RAM_DISK replicas and cached blocks) against {@code dfs.datanode.max.locked.memory}.
 */
public final class HhhReport extends Configured implements Tool {
  static final String USAGE = "Usage: hdfs hhh -report [-path PATH]";

  private final PrintStream out;

  public HhhReport(Configuration conf, PrintStream out) {
    super(conf);
    this.out = out;
  }

  @Override
  public int run(String[] args) throws IOException {
    Path under = new Path("/");
    boolean report = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("-report")) {
        report = true;
      } else if (args[i].equals("-path") && i + 1 < args.length) {
        under = new Path(args[++i]);
      } else {
        System.err.println("hhh: unknown argument '" + args[i] + "'\n" + USAGE);
        return 2;
      }
    }
    if (!report) {
      System.err.println(USAGE);
      return 2;
    }
    FileSystem fs = FileSystem.get(getConf());
    if (!(fs instanceof DistributedFileSystem)) {
      System.err.println("hhh: fs.defaultFS is " + fs.getUri() + ", not HDFS");
      return 1;
    }
    DistributedFileSystem dfs = (DistributedFileSystem) fs;
    HhhMode mode = HhhMode.from(getConf());
    BlockStoragePolicySpi root = dfs.getStoragePolicy(new Path("/"));
    out.printf(Locale.ROOT, "HHH mode: %s (%s); storage policy of /: %s%n", mode,
        HhhConfigKeys.MODE_KEY, root == null ? "unset" : root.getName());
    if (mode.rootPolicy() != null && (root == null
        || !mode.rootPolicy().equals(root.getName()))) {
      out.printf(Locale.ROOT, "  note: the mode's policy is %s; the NameNode sets it once it"
          + " has left safe mode (dfs.namenode.plugins must list %s)%n", mode.rootPolicy(),
          HhhNameNodePlugin.class.getName());
    }

    Map<String, Map<StorageType, Long>> blocks = countReplicas(dfs, under);
    DatanodeStorageReport[] reports =
        dfs.getClient().getDatanodeStorageReport(DatanodeReportType.LIVE);
    out.printf(Locale.ROOT, "%d live DataNode(s); replicas counted under %s%n", reports.length,
        under);
    for (DatanodeStorageReport r : reports) {
      DatanodeInfo dn = r.getDatanodeInfo();
      out.printf(Locale.ROOT, "%nDataNode %s (%s)  locked memory: %s used of %s%n",
          dn.getXferAddr(), dn.getHostName(), size(dn.getCacheUsed()),
          size(dn.getCacheCapacity()));
      out.printf(Locale.ROOT, "  %-9s %10s %10s %10s %8s%n", "tier", "capacity", "used",
          "remaining", "blocks");
      Map<StorageType, long[]> tiers = new EnumMap<>(StorageType.class);
      for (StorageReport s : r.getStorageReports()) {
        long[] t = tiers.computeIfAbsent(s.getStorage().getStorageType(), k -> new long[3]);
        t[0] += s.getCapacity();
        t[1] += s.getDfsUsed();
        t[2] += s.getRemaining();
      }
      Map<StorageType, Long> here = blocks.getOrDefault(dn.getXferAddr(), Map.of());
      for (Map.Entry<StorageType, long[]> t : tiers.entrySet()) {
        out.printf(Locale.ROOT, "  %-9s %10s %10s %10s %8d%n", t.getKey(), size(t.getValue()[0]),
            size(t.getValue()[1]), size(t.getValue()[2]), here.getOrDefault(t.getKey(), 0L));
      }
    }
    return 0;
  }

  /** Replicas per DataNode transfer address and storage type, over the files under dir. */
  private static Map<String, Map<StorageType, Long>> countReplicas(DistributedFileSystem dfs,
      Path dir) throws IOException {
    Map<String, Map<StorageType, Long>> count = new HashMap<>();
    RemoteIterator<LocatedFileStatus> files = dfs.listFiles(dir, true);
    while (files.hasNext()) {
      for (BlockLocation b : files.next().getBlockLocations()) {
        String[] names = b.getNames();
        StorageType[] types = b.getStorageTypes();
        for (int i = 0; i < names.length && i < types.length; i++) {
          count.computeIfAbsent(names[i], k -> new EnumMap<>(StorageType.class))
              .merge(types[i], 1L, Long::sum);
        }
      }
    }
    return count;
  }

  static String size(long bytes) {
    String[] units = {"B", "KB", "MB", "GB", "TB", "PB"};
    double v = bytes;
    int u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u++;
    }
    return u == 0 ? bytes + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new HhhReport(new HdfsConfiguration(), System.out), args));
  }
}
