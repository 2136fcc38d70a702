/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.File;
import java.io.IOException;
import java.util.List;

import org.apache.hadoop.fs.Path;
import org.apache.hadoop.util.DiskChecker;
import org.apache.hadoop.yarn.server.api.AuxiliaryLocalPathHandler;

/**
 * A NodeManager's local dirs as one directory, for running the shuffle service outside a
 * NodeManager (the benchmark, tests). A missing file is reported as the NodeManager reports it.
 */
public final class OneDirLocalPaths implements AuxiliaryLocalPathHandler {
  private final File root;

  public OneDirLocalPaths(File root) {
    this.root = root;
  }

  @Override
  public Path getLocalPathForRead(String path) throws IOException {
    File f = new File(root, path);
    if (!f.exists()) {
      throw new DiskChecker.DiskErrorException("Could not find " + path);
    }
    return new Path(f.getPath());
  }

  @Override
  public Path getLocalPathForWrite(String path) {
    return new Path(new File(root, path).getPath());
  }

  @Override
  public Path getLocalPathForWrite(String path, long size) {
    return getLocalPathForWrite(path);
  }

  @Override
  public Iterable<Path> getAllLocalPathsForRead(String path) {
    return List.of(new Path(new File(root, path).getPath()));
  }
}
