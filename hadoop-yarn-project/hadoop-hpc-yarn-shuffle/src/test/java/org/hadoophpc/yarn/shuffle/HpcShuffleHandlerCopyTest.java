/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;

/**
 * The service's tests over tcp with {@code mapreduce.hpc.shuffle.sendfile=false}: chunks are
 * read into pool buffers on reader threads, first chunks read ahead (the verbs path, on tcp).
 */
class HpcShuffleHandlerCopyTest extends HpcShuffleHandlerTest {
  @Override
  protected void configureTransport(Configuration conf) {
    super.configureTransport(conf);
    conf.setBoolean(ShuffleConfigKeys.SENDFILE_KEY, false);
  }

  @Override
  protected boolean sendsFromFiles() {
    return false;
  }
}
