/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import java.io.IOException;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.LocalFileSystem;

/**
 * The Lustre binding: {@code file://} (checksummed, as stock {@link LocalFileSystem}) over
 * {@link LustreRawFileSystem}, which lays out and locates files under
 * {@link LustreConfigKeys#MOUNT_KEY}. Enabled with
 * {@code fs.file.impl=org.hadoophpc.fs.lustre.LustreFileSystem} (the Lustre mode templates
 * set it); {@code FileSystem.getLocal} keeps working because this is a LocalFileSystem.
 * {@link LustreConfigKeys#CHECKSUM_FILES_KEY} turns Hadoop's {@code .crc} side files off.
 */
public class LustreFileSystem extends LocalFileSystem {
  public LustreFileSystem() {
    super(new LustreRawFileSystem());
  }

  @Override
  public void initialize(URI name, Configuration conf) throws IOException {
    super.initialize(name, conf);
    boolean crc = conf.getBoolean(LustreConfigKeys.CHECKSUM_FILES_KEY,
        LustreConfigKeys.CHECKSUM_FILES_DEFAULT);
    setWriteChecksum(crc);
    setVerifyChecksum(crc);
  }

  /** The raw file system underneath, for its {@link LustreRawFileSystem#lustreState()}. */
  public LustreRawFileSystem lustreRaw() {
    return (LustreRawFileSystem) getRawFileSystem();
  }
}
