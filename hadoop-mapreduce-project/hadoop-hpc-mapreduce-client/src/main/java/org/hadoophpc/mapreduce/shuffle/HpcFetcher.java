/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.shuffle;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.Reporter;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.task.reduce.MapHost;
import org.apache.hadoop.mapreduce.task.reduce.MapOutput;
import org.apache.hadoop.mapreduce.task.reduce.MergeManager;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleClientMetrics;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleSchedulerImpl;
import org.apache.hadoop.util.Time;
import org.hadoophpc.mapreduce.shuffle.protocol.OpenResponse;
import org.hadoophpc.mapreduce.shuffle.protocol.ShuffleError;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One fetcher thread: takes a host from the scheduler, opens a fetch session for the maps it
 * holds and streams each partition into the output the merge manager reserves. Failures are
 * reported as stock's fetcher reports them: a map whose output is missing, short or corrupt is a
 * read error for that map ({@code copyFailed(map, host, true, false)}, which tells the AM); a host
 * that answers on no port at all is a connect failure for all its maps; one whose service answers
 * BUSY more than {@code mapreduce.hpc.shuffle.busy.max.retries} times in a row is a failure for
 * all its maps.
 */
final class HpcFetcher<K, V> extends MapOutputFetcher<K, V> {
  private static final Logger LOG = LoggerFactory.getLogger(HpcFetcher.class);
  private static final int STOCK_PROBE_MS = 2000;
  private static final long BUSY_BACKOFF_MS = 500;

  private final String jobId;
  private final int reduce;
  private final ShuffleFetchClient client;

  HpcFetcher(HpcShuffleConsumer<K, V> consumer, int id, JobConf job, TaskAttemptID reduceId,
      ShuffleSchedulerImpl<K, V> scheduler, MergeManager<K, V> merger,
      ShuffleClientMetrics metrics, Reporter reporter, ShuffleFetchClient client) {
    super("hpc-fetcher", consumer, id, scheduler, merger, metrics, reporter);
    this.jobId = reduceId.getJobID().toString();
    this.reduce = reduceId.getTaskID().getId();
    this.client = client;
  }

  @Override
  void copyFromHost(MapHost host) throws IOException {
    List<TaskAttemptID> maps = scheduler.getMapsForHost(host);
    if (maps.isEmpty()) {
      return;
    }
    // As stock's Fetcher: every map not copied goes back to the scheduler (in the finally),
    // failed ones included, after copyFailed has counted the failure and penalised the host.
    // So a map that keeps failing is fetched again, reported to the AM again and finally
    // re-run; a reducer never waits for a map nobody will fetch.
    Set<TaskAttemptID> remaining = new LinkedHashSet<>(maps);
    List<String> ids = new ArrayList<>(maps.size());
    for (TaskAttemptID m : maps) {
      ids.add(m.toString());
    }
    FetchSession session = null;
    try {
      session = open(host, ids, remaining);
      if (session == null) {
        return;
      }
      List<TaskAttemptID> unreadable = new ArrayList<>();
      for (int i = 0; i < maps.size() && !stopped; i++) {
        TaskAttemptID map = maps.get(i);
        OpenResponse.Partition p = session.partitions().get(i);
        if (p.status() != OpenResponse.Status.OK || p.rawLength() < 0 || p.partLength() < 0) {
          LOG.warn("fetcher#{}: {} cannot serve {} for reduce {}: {} {}", id, host, map, reduce,
              p.status(), p.message());
          unreadable.add(map);
          continue;
        }
        MapOutput<K, V> out;
        try {
          out = merger.reserve(map, p.rawLength(), id);
        } catch (IOException e) {
          scheduler.reportLocalError(e);
          return;
        }
        if (out == null) {
          LOG.info("fetcher#{}: merge manager asks to wait; {} maps go back", id,
              remaining.size());
          break;
        }
        long start = Time.monotonicNow();
        long before = session.bytesReceived();
        try (InputStream in = session.stream(i)) {
          LOG.debug("fetcher#{}: {} ({} bytes, {} raw) from {} to {}", id, map, p.partLength(),
              p.rawLength(), host, out.getDescription());
          out.shuffle(host, in, p.partLength(), p.rawLength(), metrics, reporter);
        } catch (InterruptedIOException e) {
          out.abort();
          throw e;
        } catch (InternalError | Exception e) {
          out.abort();
          consumer.countBytes(session.transportName(), session.bytesReceived() - before);
          LOG.warn("fetcher#{}: failed to shuffle the output of {} from {} over {}", id, map,
              host, session.transportName(), e);
          metrics.failedFetch();
          scheduler.hostFailed(host.getHostName());
          scheduler.copyFailed(map, host, true, false);
          client.forget(host.getHostName());
          return;
        }
        consumer.countBytes(session.transportName(), session.bytesReceived() - before);
        scheduler.copySucceeded(map, host, p.partLength(), start, Time.monotonicNow(), out);
        remaining.remove(map);
        metrics.successFetch();
      }
      if (!unreadable.isEmpty()) {
        scheduler.hostFailed(host.getHostName());
        for (TaskAttemptID map : unreadable) {
          metrics.failedFetch();
          scheduler.copyFailed(map, host, true, false);
        }
      }
    } finally {
      if (session != null) {
        session.close();
      }
      for (TaskAttemptID left : remaining) {
        scheduler.putBackKnownMapOutput(host, left);
      }
    }
  }

  /** Opens the session, or handles why not (the maps stay in {@code remaining}) and null. */
  private FetchSession open(MapHost host, List<String> ids, Set<TaskAttemptID> remaining)
      throws IOException {
    try {
      FetchSession s = client.open(host.getHostName(), jobId, reduce, ids);
      client.notBusy(host.getHostName());
      return s;
    } catch (ServiceUnreachableException e) {
      client.notBusy(host.getHostName());
      if (stockShuffleAnswers(host.getHostName())) {
        consumer.requestFallback(e.getMessage() + ", while the stock shuffle of "
            + host.getHostName() + " answers: is yarn.nodemanager.aux-services.mapreduce_shuffle"
            + ".class=org.hadoophpc.yarn.shuffle.HpcShuffleHandler on that NodeManager, did its"
            + " hpc listener start (its log says why not), and are " + ShuffleConfigKeys.PORT_KEY
            + " and " + ShuffleConfigKeys.PORT_RANGE_KEY + " the same for the job and the"
            + " NodeManager?");
        return null;
      }
      hostFailed(host, remaining, true, "is unreachable (neither the hpc nor the stock shuffle"
          + " answers)", e);
      return null;
    } catch (ShuffleServiceException e) {
      if (e.code() == ShuffleError.BUSY) {
        // The maps go back without a failure, so nothing else would ever bound this wait (the
        // reducer reports progress meanwhile): after the bound it is a failed fetch, as stock
        // counts a host that does not serve.
        int busy = client.busy(host.getHostName());
        int bound = client.conf().busyMaxRetries();
        if (busy > bound) {
          client.notBusy(host.getHostName());
          hostFailed(host, remaining, false, "answered BUSY " + busy + " times in a row ("
              + ShuffleConfigKeys.BUSY_MAX_RETRIES_KEY + "=" + bound + ")", e);
          return null;
        }
        LOG.info("fetcher#{}: {} is busy ({} of {} waits); retrying later", id, host, busy,
            bound);
        try {
          Thread.sleep(BUSY_BACKOFF_MS); // stock's penalize is package-private
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new InterruptedIOException("interrupted");
        }
        return null;
      }
      // The NodeManager beside the maps answered but will not serve them: it stopped the job
      // (shutting down, or the job's application ended there) or refuses the request. Stock's
      // fetcher meets the same NodeManager refusing its URL and counts a failure per map.
      client.notBusy(host.getHostName());
      hostFailed(host, remaining, false, "refused the fetch", e);
      return null;
    } catch (InterruptedIOException e) {
      throw e;
    } catch (IOException e) {
      client.notBusy(host.getHostName());
      hostFailed(host, remaining, false, "failed the open", e);
      return null;
    }
  }

  /** As stock's fetcher when a host cannot be fetched from: one failure per map, none dropped. */
  private void hostFailed(MapHost host, Set<TaskAttemptID> remaining, boolean connect,
      String what, Exception e) {
    LOG.warn("fetcher#{}: {} {} over {}: reporting its {} maps as failed fetches: {}", id, host,
        what, client.transportName(), remaining.size(), e.getMessage());
    client.forget(host.getHostName());
    scheduler.hostFailed(host.getHostName());
    for (TaskAttemptID m : remaining) {
      metrics.failedFetch();
      scheduler.copyFailed(m, host, false, connect);
    }
  }

  /** True when something accepts connections on the stock shuffle port of {@code host}. */
  private static boolean stockShuffleAnswers(String host) {
    int colon = host.lastIndexOf(':');
    if (colon <= 0) {
      return false;
    }
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host.substring(0, colon),
          Integer.parseInt(host.substring(colon + 1))), STOCK_PROBE_MS);
      return true;
    } catch (IOException | NumberFormatException e) {
      return false;
    }
  }
}
