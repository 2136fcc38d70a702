/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.lustre;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;

import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.MapOutputCollector;
import org.apache.hadoop.mapred.MapOutputFile;
import org.apache.hadoop.mapred.MapTask;
import org.apache.hadoop.mapreduce.MRConfig;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleConsumer;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The map side of MapReduce over Lustre without local disks: Hadoop's own sort and spill
 * ({@link MapTask.MapOutputBuffer}, so every key type, comparator, combiner and codec behaves as
 * stock) writes the map's one output file and index as usual, then this collector publishes them
 * on the shared mount ({@link SharedMapOutputs}, hard links where it can) where reducers read
 * them directly.
 *
 * <p>Enable with {@code mapreduce.job.map.output.collector.class=}this class, together with
 * {@code mapreduce.hpc.lustre.mode=no-local-disks}, {@code mapreduce.hpc.lustre.shuffle.dir} and
 * the {@link HpcShuffleConsumer} reducer plugin (the {@code etc/hadoop/modes/lustre-no-local-disks}
 * template sets them all). Any of them missing fails the map at once with the key to set: stock
 * reducers would not find the published files.
 */
public class LustreMapOutputCollector<K, V> implements MapOutputCollector<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(LustreMapOutputCollector.class);

  private final MapTask.MapOutputBuffer<K, V> sorter = new MapTask.MapOutputBuffer<>();
  private MapTask task;
  private SharedMapOutputs shared;
  private boolean local;

  @Override
  public void init(Context context) throws IOException, ClassNotFoundException {
    JobConf job = context.getJobConf();
    LustreMode mode = LustreMode.from(job);
    if (mode != LustreMode.NO_LOCAL_DISKS) {
      throw new IOException(getClass().getSimpleName() + " publishes map outputs for reducers"
          + " that read them from Lustre, but " + ShuffleConfigKeys.LUSTRE_MODE_KEY + "="
          + mode.value() + ": set it to " + LustreMode.NO_LOCAL_DISKS.value() + ", or remove "
          + MRJobConfig.MAP_OUTPUT_COLLECTOR_CLASS_ATTR);
    }
    String plugin = job.get(MRConfig.SHUFFLE_CONSUMER_PLUGIN, "");
    if (!HpcShuffleConsumer.class.getName().equals(plugin)) {
      throw new IOException(ShuffleConfigKeys.LUSTRE_MODE_KEY + "=" + mode.value() + " needs "
          + MRConfig.SHUFFLE_CONSUMER_PLUGIN + "=" + HpcShuffleConsumer.class.getName()
          + " (is '" + plugin + "'): other reducers cannot read map outputs from Lustre");
    }
    try {
      shared = SharedMapOutputs.from(job);
    } catch (IllegalArgumentException e) {
      throw new IOException(e.getMessage(), e);
    }
    shared.checkUsable();
    task = context.getMapTask();
    local = MRConfig.LOCAL_FRAMEWORK_NAME.equals(job.get(MRConfig.FRAMEWORK_NAME));
    sorter.init(context);
  }

  @Override
  public void collect(K key, V value, int partition) throws IOException, InterruptedException {
    sorter.collect(key, value, partition);
  }

  @Override
  public void flush() throws IOException, InterruptedException, ClassNotFoundException {
    sorter.flush();
    MapOutputFile files = task.getMapOutputFile();
    Path output = local(files.getOutputFile());
    Path index = local(files.getOutputIndexFile());
    String job = task.getJobID().toString();
    String attempt = task.getTaskID().toString();
    if (local) {
      return; // LocalJobRunner: its reducers read the task's files, and nothing would clean up
    }
    long bytes = java.nio.file.Files.size(output);
    boolean linked = shared.publish(job, attempt, output, index);
    LOG.info("published the map output of {} ({} bytes) in {} ({})", attempt, bytes,
        shared.attemptDir(job, attempt), linked ? "hard links"
            : "copied: the task's local dirs are on another file system than the shared dir");
  }

  @Override
  public void close() throws IOException, InterruptedException {
    sorter.close();
  }

  private static Path local(org.apache.hadoop.fs.Path p) {
    return Paths.get(p.toUri().getPath());
  }
}
