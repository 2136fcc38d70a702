/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.apache.hadoop.yarn.server.api.AuxiliaryLocalPathHandler;

/**
 * A NodeManager's worth of map outputs for service tests: local dirs under a temp directory laid
 * out as stock map tasks leave them ({@code usercache/<user>/appcache/<app>/output/<attempt>/
 * file.out[.index]}), with random partition bytes the test can compare against.
 */
final class ShuffleTestNode {
  static final String USER = "alice";

  final File root;
  final ApplicationId app;
  final JobID job;
  final byte[] password;
  /** [map][reduce] the partition bytes written. */
  final List<byte[][]> partitions = new ArrayList<>();
  final List<String> attempts = new ArrayList<>();

  ShuffleTestNode(File root, long clusterTs, int appId, long seed) {
    this.root = root;
    this.app = ApplicationId.newInstance(clusterTs, appId);
    this.job = new JobID(Long.toString(clusterTs), appId);
    this.password = ("secret-" + seed).getBytes();
  }

  /** Writes the output of map {@code index}: one partition per entry of {@code sizes}. */
  String addMap(int index, int[] sizes, long seed) throws IOException {
    String attempt = new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, index, 0)
        .toString();
    File dir = new File(root, "usercache/" + USER + "/appcache/" + app + "/output/" + attempt);
    Files.createDirectories(dir.toPath());
    Random r = new Random(seed);
    byte[][] parts = new byte[sizes.length][];
    SpillRecord spill = new SpillRecord(sizes.length);
    long offset = 0;
    try (java.io.FileOutputStream out = new java.io.FileOutputStream(new File(dir,
        MapOutputLocator.DATA_FILE))) {
      for (int p = 0; p < sizes.length; p++) {
        parts[p] = new byte[sizes[p]];
        r.nextBytes(parts[p]);
        out.write(parts[p]);
        // raw length differs from the on-disk length, as with a codec
        spill.putIndex(new IndexRecord(offset, sizes[p] + 7L, sizes[p]), p);
        offset += sizes[p];
      }
    }
    spill.writeToFile(new Path(new File(dir, MapOutputLocator.INDEX_FILE).getPath()),
        new JobConf(new Configuration(false)));
    partitions.add(parts);
    attempts.add(attempt);
    return attempt;
  }

  File dataFile(String attempt) {
    return new File(root, "usercache/" + USER + "/appcache/" + app + "/output/" + attempt + "/"
        + MapOutputLocator.DATA_FILE);
  }

  /** The NodeManager's local dirs, for the service under test. */
  AuxiliaryLocalPathHandler localPaths() {
    return new OneDirLocalPaths(root);
  }

  ApplicationInitializationContext initContext() throws IOException {
    Token<JobTokenIdentifier> token = new Token<>(new byte[0], password,
        JobTokenIdentifier.KIND_NAME, new Text("job"));
    DataOutputBuffer out = new DataOutputBuffer();
    token.write(out);
    return new ApplicationInitializationContext(USER, app,
        ByteBuffer.wrap(out.getData(), 0, out.getLength()));
  }
}
