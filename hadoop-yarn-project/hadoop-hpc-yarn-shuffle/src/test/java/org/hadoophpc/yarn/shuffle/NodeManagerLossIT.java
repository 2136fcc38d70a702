/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.mapreduce.MRJobConfig;
import org.apache.hadoop.mapreduce.TaskCompletionEvent;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.TypeConverter;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.NodeId;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;
import org.hadoophpc.mapreduce.shuffle.HpcShuffleCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The shuffle service of a NodeManager holding map outputs dies as the reducers' hpc shuffle
 * begins (the NodeManager itself stays registered and healthy, so neither the RM's node expiry,
 * set to 10 minutes here, nor the AM's unusable-node handling can explain a re-run): the job
 * still succeeds with stock's output because the reducers report the unreachable host as
 * stock's do, the AM re-runs the lost maps, the reducers fetch the new outputs.
 */
// a job that hangs fails the test instead of the CI run
@org.junit.jupiter.api.Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
class NodeManagerLossIT {
  private static HpcMiniCluster cluster;
  private static Path input;

  @BeforeAll
  static void start() throws Exception {
    Configuration extra = new Configuration(false);
    extra.setLong(YarnConfiguration.RM_NM_EXPIRY_INTERVAL_MS, 600_000);
    extra.setInt(MRJobConfig.MAX_FETCH_FAILURES_NOTIFICATIONS, 1);
    extra.setLong(MRJobConfig.MAX_SHUFFLE_FETCH_RETRY_DELAY, 1000);
    cluster = new HpcMiniCluster("nm-loss", 2, extra, SickShuffleHandler.class);
    input = cluster.text("nm-loss", 40_000, 4000, 11);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  /**
   * Six maps (1.5 MB of text), two reducers: the ApplicationMaster's NodeManager has room for
   * three more containers, so at least three maps run on the other one.
   */
  private static Job job(Configuration conf, Path out) throws IOException {
    return HpcMiniCluster.wordCount(conf, input, out, 2, 256 * 1024);
  }

  @Test
  void jobSurvivesAShuffleServiceLostDuringTheShuffle() throws Exception {
    // what stock's shuffle gives (ShuffleDifferentialIT compares the two shuffles themselves)
    List<String> want = cluster.wordCountDigest(input, 2);
    assertFalse(want.isEmpty());

    // reducers start once every map is done; the NodeManager without the AM is stopped at that
    // moment, taking the map outputs it holds with it before the reducers fetch them
    Configuration conf = cluster.hpc();
    conf.setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 1.0f);
    Path out = new Path("/nm-loss/hpc");
    Job job = job(conf, out);
    job.getConfiguration().setFloat(MRJobConfig.COMPLETED_MAPS_FOR_REDUCE_SLOWSTART, 1.0f);
    job.submit();
    ApplicationId app = TypeConverter.toYarn(job.getJobID()).getAppId();
    NodeManager victim = null;
    long deadline = System.currentTimeMillis() + 240_000;
    while (victim == null && System.currentTimeMillis() < deadline && !job.isComplete()) {
      Thread.sleep(50);
      int maps = job.getTaskReports(TaskType.MAP).length;
      if (maps == 0 || mapsSucceeded(job) < maps) {
        continue;
      }
      NodeId amNode = cluster.mr.getResourceManager().getRMContext().getRMApps().get(app)
          .getCurrentAppAttempt().getMasterContainer().getNodeId();
      for (int i = 0; i < 2; i++) {
        NodeManager nm = cluster.mr.getNodeManager(i);
        if (!nm.getNMContext().getNodeId().equals(amNode)) {
          victim = nm;
        }
      }
    }
    assertTrue(victim != null, "maps never finished, or no NodeManager without the AM");
    int stockPort = ShuffleHandler.deserializeMetaData(victim.getNMContext().getAuxServices()
        .getMetaData().get(ShuffleHandler.MAPREDUCE_SHUFFLE_SERVICEID));
    long held = mapOutputsAt(job, ":" + stockPort);
    assertFalse(job.isComplete(), "the job ended before its shuffle");
    int stopped = 0;
    for (SickShuffleHandler s : SickShuffleHandler.STARTED) {
      if (s.stockPort() == stockPort) {
        s.stop(); // both halves: stock's HTTP and ours; the NodeManager stays up
        stopped++;
      }
    }
    assertEquals(1, stopped, "the victim's mapreduce_shuffle");
    // The victim stays a healthy, registered node with a dead shuffle: as with stock, a map
    // re-run there would be lost again. Its capacity goes to zero (its running containers stay),
    // so re-runs land on the other NodeManager. (Not the AM's blacklisting: both NodeManagers
    // are "localhost", and blacklisting one blacklists both.)
    NodeId victimId = victim.getNMContext().getNodeId();
    cluster.mr.getResourceManager().getRMContext().getRMAdminService().updateNodeResource(
        org.apache.hadoop.yarn.server.api.protocolrecords.UpdateNodeResourceRequest.newInstance(
            java.util.Map.of(victimId, org.apache.hadoop.yarn.api.records.ResourceOption
                .newInstance(org.apache.hadoop.yarn.api.records.Resource.newInstance(0, 0),
                    -1))));
    assertTrue(held > 0, "the stopped NodeManager held no map output (port " + stockPort + ")");

    assertTrue(job.waitForCompletion(false), "the job failed after losing a NodeManager: "
        + job.getStatus().getFailureInfo());
    assertEquals(want, cluster.digest(out), "output after losing a NodeManager");
    assertTrue(job.getCounters().findCounter(HpcShuffleCounter.BYTES_OVER_TCP).getValue() > 0,
        "the reducers used the hpc shuffle");
    assertEquals(0, job.getCounters().findCounter(HpcShuffleCounter.FALLBACKS).getValue(),
        "a lost node is not a reason to fall back");
    long rerun = java.util.Arrays.stream(job.getTaskCompletionEvents(0, 1000))
        .filter(e -> e.getTaskAttemptId().getTaskType() == TaskType.MAP
            && e.getTaskAttemptId().getId() > 0
            && e.getStatus() == TaskCompletionEvent.Status.SUCCEEDED).count();
    // The node stayed registered and healthy (RM expiry 10 min, no unusable-node update), so
    // the AM re-ran the maps only because the reducers reported their failed fetches. (The
    // job's FAILED_SHUFFLE counter may not show them: reducers that fail fetches without
    // progress are failed by stock's health check, and their counters leave with them.)
    assertTrue(rerun >= 1, "the lost map outputs were produced again");
  }

  private static int mapsSucceeded(Job job) throws Exception {
    int n = 0;
    for (TaskCompletionEvent e : job.getTaskCompletionEvents(0, 1000)) {
      if (e.getTaskAttemptId().getTaskType() == TaskType.MAP
          && e.getStatus() == TaskCompletionEvent.Status.SUCCEEDED) {
        n++;
      }
    }
    return n;
  }

  /** Successful map attempts whose output is served at a tracker URL ending in {@code port}. */
  private static long mapOutputsAt(Job job, String port) throws Exception {
    return java.util.Arrays.stream(job.getTaskCompletionEvents(0, 1000))
        .filter(e -> e.getTaskAttemptId().getTaskType() == TaskType.MAP
            && e.getStatus() == TaskCompletionEvent.Status.SUCCEEDED
            && e.getTaskTrackerHttp().endsWith(port)).count();
  }
}
