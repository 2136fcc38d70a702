/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The Lustre binding: {@code file://} (checksummed, as stock {@link LocalFileSystem}) over
 * {@link LustreRawFileSystem}, which lays out and locates files under
 * {@link LustreConfigKeys#MOUNT_KEY}. Enabled with
 * {@code fs.file.impl=org.hadoophpc.fs.lustre.LustreFileSystem} (the Lustre mode templates
 * set it); {@code FileSystem.getLocal} keeps working because this is a LocalFileSystem.
 */
public class LustreFileSystem extends LocalFileSystem {
  public LustreFileSystem() {
    super(new LustreRawFileSystem());
  }

  /** The raw file system underneath, for its {@link LustreRawFileSystem#lustreState()}. */
  public LustreRawFileSystem lustreRaw() {
    return (LustreRawFileSystem) getRawFileSystem();
  }
}
