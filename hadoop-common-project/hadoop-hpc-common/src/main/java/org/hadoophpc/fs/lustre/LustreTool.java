/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import java.io.IOException;
import java.io.PrintStream;
import java.util.Arrays;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.conf.Configured;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.hadoophpc.nativeio.LustreLayout;

/**
 * {@code hadoop lustre <path>...}: what the Lustre binding sees for each file, i.e. its
 * layout, the block (split) size it gets, and the hosts each block's OSTs map to (the binding
 * logs whether layouts are on as it starts). Exit codes:
 * 0 printed, 1 a path could not be read, 2 layouts are off (the reason is printed) or
 * {@code fs.file.impl} is not the binding.
 */
public final class LustreTool extends Configured implements Tool {
  private final PrintStream out;

  public LustreTool(Configuration conf, PrintStream out) {
    super(conf);
    this.out = out;
  }

  @Override
  public int run(String[] args) throws IOException {
    if (args.length == 0) {
      out.println("usage: hadoop lustre <path>...   (layout, block size and hosts of files on"
          + " " + LustreConfigKeys.MOUNT_KEY + ")");
      return 2;
    }
    Configuration conf = getConf();
    FileSystem fs = FileSystem.newInstance(new Path("file:///").toUri(), conf);
    try {
      if (!(fs instanceof LustreFileSystem)) {
        out.println("file:// is " + fs.getClass().getName() + ", not the Lustre binding: set "
            + "fs.file.impl=" + LustreFileSystem.class.getName() + " (the Lustre mode "
            + "templates do)");
        return 2;
      }
      LustreRawFileSystem raw = ((LustreFileSystem) fs).lustreRaw();
      if (!raw.layoutsEnabled()) {
        out.println(raw.lustreState());
        return 2;
      }
      int rc = 0;
      for (String arg : args) {
        rc = Math.max(rc, describe(fs, raw, new Path(arg)));
      }
      return rc;
    } finally {
      fs.close();
    }
  }

  private int describe(FileSystem fs, LustreRawFileSystem raw, Path path) {
    try {
      FileStatus status = fs.getFileStatus(path);
      LustreLayout layout = raw.layoutOf(status.getPath());
      out.println(path + ": " + (layout == null ? "no Lustre layout (not under "
          + LustreConfigKeys.MOUNT_KEY + ")" : layout));
      if (!status.isFile()) {
        return 0;
      }
      out.println("  length " + status.getLen() + ", block size " + status.getBlockSize());
      for (BlockLocation b : fs.getFileBlockLocations(status, 0, status.getLen())) {
        out.println("  block " + b.getOffset() + "+" + b.getLength() + ": hosts "
            + String.join(",", Arrays.asList(b.getHosts())));
      }
      return 0;
    } catch (IOException e) {
      out.println(path + ": " + e.getMessage());
      return 1;
    }
  }

  public static void main(String[] args) throws Exception {
    System.exit(ToolRunner.run(new LustreTool(new Configuration(), System.out), args));
  }
}
