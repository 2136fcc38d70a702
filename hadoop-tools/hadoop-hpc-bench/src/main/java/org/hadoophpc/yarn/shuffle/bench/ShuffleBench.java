/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.yarn.shuffle.bench;

import java.io.DataInputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import javax.crypto.SecretKey;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.io.DataOutputBuffer;
import org.apache.hadoop.io.Text;
import org.apache.hadoop.io.WritableUtils;
import org.apache.hadoop.mapred.IndexRecord;
import org.apache.hadoop.mapred.JobConf;
import org.apache.hadoop.mapred.ShuffleHandler;
import org.apache.hadoop.mapred.SpillRecord;
import org.apache.hadoop.mapreduce.JobID;
import org.apache.hadoop.mapreduce.TaskAttemptID;
import org.apache.hadoop.mapreduce.TaskType;
import org.apache.hadoop.mapreduce.security.SecureShuffleUtils;
import org.apache.hadoop.mapreduce.security.token.JobTokenIdentifier;
import org.apache.hadoop.mapreduce.security.token.JobTokenSecretManager;
import org.apache.hadoop.mapreduce.task.reduce.ShuffleHeader;
import org.apache.hadoop.metrics2.lib.DefaultMetricsSystem;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.server.api.ApplicationInitializationContext;
import org.hadoophpc.mapreduce.shuffle.FetchSession;
import org.hadoophpc.mapreduce.shuffle.ShuffleConf;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;
import org.hadoophpc.mapreduce.shuffle.ShuffleFetchClient;
import org.hadoophpc.net.Transport;
import org.hadoophpc.net.TransportConf;
import org.hadoophpc.net.TransportConfigKeys;
import org.hadoophpc.net.TransportFactory;
import org.hadoophpc.yarn.shuffle.HpcShuffleHandler;
import org.hadoophpc.yarn.shuffle.OneDirLocalPaths;

/**
 * Shuffle fetch benchmark: one {@link HpcShuffleHandler} (stock's HTTP shuffle and ours in one
 * service) over the same map-output files, read by R reducers in parallel, each fetching its
 * partition of every map; runs alternate stock / hpc / raw loopback TCP (plain sockets moving the
 * same bytes) and the medians are compared. Reducers read into a reused buffer, as both shuffles'
 * consumers copy out of the network buffers.
 *
 * <p>Usage: {@code ShuffleBench [--maps M] [--reducers R] [--size BYTES] [--rounds N]
 * [--transport tcp|verbs] [--bind ADDRESS] [--dir DIR] [--conf KEY=VALUE]...
 * [--only stock|hpc|loopback-tcp]} (--conf sets transport or shuffle keys for the service and
 * the reducers; --only measures one variant, for a profiler, and prints no RESULT lines)
 */
public final class ShuffleBench {
  private static final int MAPS_PER_FETCH = 20; // stock's ShuffleSchedulerImpl.MAX_MAPS_AT_ONCE
  private static final long CLUSTER_TS = 1700000000000L;

  private int maps = 16;
  private int reducers = 8;
  private long size = 512L << 20;
  private int rounds = 3;
  private String transport = "tcp";
  private String bind = "127.0.0.1";
  private File dir;
  /** Measure only this variant (stock, hpc, loopback-tcp): for profiling, no RESULT lines. */
  private String only;
  private final Configuration extra = new Configuration(false);

  private JobID job;
  private String user;
  private byte[] password;
  private List<String> attempts = new ArrayList<>();
  private long partition;

  public static void main(String[] args) throws Exception {
    ShuffleBench b = new ShuffleBench();
    b.parse(args);
    b.run();
  }

  private void parse(String[] args) {
    for (int i = 0; i < args.length; i++) {
      String v = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--maps" -> maps = Integer.parseInt(need(args[i], v));
        case "--reducers" -> reducers = Integer.parseInt(need(args[i], v));
        case "--size" -> size = parseSize(need(args[i], v));
        case "--rounds" -> rounds = Integer.parseInt(need(args[i], v));
        case "--transport" -> transport = need(args[i], v);
        case "--bind" -> bind = need(args[i], v);
        case "--dir" -> dir = new File(need(args[i], v));
        case "--only" -> {
          only = need(args[i], v);
          if (!List.of("stock", "hpc", "loopback-tcp").contains(only)) {
            throw new IllegalArgumentException("--only takes stock, hpc or loopback-tcp");
          }
        }
        case "--conf" -> {
          String kv = need(args[i], v);
          int eq = kv.indexOf('=');
          if (eq <= 0) {
            throw new IllegalArgumentException("--conf takes KEY=VALUE, not " + kv);
          }
          extra.set(kv.substring(0, eq), kv.substring(eq + 1));
        }
        default -> throw new IllegalArgumentException("unknown option " + args[i]
            + "; options: --maps --reducers --size --rounds --transport --bind --dir"
            + " --conf KEY=VALUE --only stock|hpc|loopback-tcp");
      }
      i++;
    }
    if (maps < 1 || reducers < 1 || rounds < 1 || size < (long) maps * reducers) {
      throw new IllegalArgumentException("need maps, reducers, rounds >= 1 and size >= maps"
          + " x reducers bytes");
    }
  }

  private static String need(String opt, String v) {
    if (v == null) {
      throw new IllegalArgumentException(opt + " needs a value");
    }
    return v;
  }

  static long parseSize(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    long mult = switch (t.charAt(t.length() - 1)) {
      case 'k' -> 1L << 10;
      case 'm' -> 1L << 20;
      case 'g' -> 1L << 30;
      default -> 1;
    };
    return Long.parseLong(mult == 1 ? t : t.substring(0, t.length() - 1)) * mult;
  }

  private void run() throws Exception {
    DefaultMetricsSystem.setMiniClusterMode(true);
    if (dir == null) {
      dir = Files.createTempDirectory("hpc-shuffle-bench").toFile();
    }
    job = new JobID(Long.toString(CLUSTER_TS), 1);
    user = System.getProperty("user.name");
    password = "shuffle-bench-secret".getBytes();
    partition = size / ((long) maps * reducers);
    System.out.printf("shuffle bench: %d maps x %d reducers, %.1f MiB per partition, %.0f MiB"
        + " in all, %d rounds, hpc over %s%n", maps, reducers, partition / 1048576.0,
        partition * maps * reducers / 1048576.0, rounds, transport);
    System.out.printf("writing %d map outputs under %s ...%n", maps, dir);
    writeMapOutputs();
    Configuration conf = new Configuration();
    conf.setInt(ShuffleHandler.SHUFFLE_PORT_CONFIG_KEY, 0);
    conf.setInt(ShuffleConfigKeys.PORT_KEY, freePort());
    conf.set(ShuffleConfigKeys.BIND_HOST_KEY, bind);
    conf.set(TransportConfigKeys.TRANSPORT_KEY, transport);
    for (java.util.Map.Entry<String, String> e : extra) {
      conf.set(e.getKey(), e.getValue()); // both sides: the service and every reducer
    }
    HpcShuffleHandler handler = new HpcShuffleHandler();
    handler.setAuxiliaryLocalPathHandler(new OneDirLocalPaths(dir));
    handler.init(conf);
    handler.start();
    try {
      handler.initializeApplication(initContext());
      int stockPort = ShuffleHandler.deserializeMetaData(handler.getMetaData());
      int hpcPort = handler.address().getPort();
      System.out.printf("stock shuffle on port %d (HTTP), hpc shuffle on %s port %d (%s)%n",
          stockPort, bind, hpcPort, handler.transportName());
      if (only != null) {
        profileOne(conf, stockPort, hpcPort);
        return;
      }
      double[] stock = new double[rounds];
      double[] hpc = new double[rounds];
      double[] raw = new double[rounds];
      double[][] cpu = new double[3][rounds];
      for (int r = 0; r < rounds; r++) {
        double[] used = new double[1];
        stock[r] = measure("stock", () -> fetchStock(stockPort), used);
        cpu[0][r] = used[0];
        hpc[r] = measure("hpc", () -> fetchHpc(conf, hpcPort), used);
        cpu[1][r] = used[0];
        raw[r] = measure("loopback-tcp", this::streamRaw, used);
        cpu[2][r] = used[0];
        System.out.printf("round %d: stock %8.1f MB/s   hpc %8.1f MB/s   raw loopback tcp"
            + " %8.1f MB/s   (cpu s/GB: %.2f %.2f %.2f)%n", r + 1, stock[r], hpc[r], raw[r],
            cpu[0][r], cpu[1][r], cpu[2][r]);
      }
      double s = median(stock);
      double h = median(hpc);
      double l = median(raw);
      System.out.printf("medians: stock %.1f MB/s, hpc %.1f MB/s, raw loopback tcp %.1f MB/s;"
          + " process cpu s/GB (both sides): stock %.2f, hpc %.2f, raw %.2f;"
          + " hpc served %d bytes in %d reads, %d pre-fetch hits%n", s, h, l, median(cpu[0]),
          median(cpu[1]), median(cpu[2]), handler.metrics().bytesServed(),
          handler.metrics().readRequests(), handler.metrics().prefetchHits());
      System.out.printf("hpc: %d of the reducers' %d connections went by a same-host Unix"
          + " socket (hadoop.hpc.transport.tcp.local.dir; on a cluster only fetches within a node"
          + " do; --conf hadoop.hpc.transport.tcp.local.dir= for TCP)%n", hpcLocal.sum(),
          hpcConnections.sum());
      System.out.printf(Locale.ROOT, "RESULT shuffle-fetch stock=%.1f hpc=%.1f speedup=%.2f%n",
          s, h, h / s);
      System.out.printf(Locale.ROOT,
          "RESULT shuffle-fetch-vs-loopback-tcp loopback=%.1f hpc=%.1f ratio=%.2f%n", l, h,
          h / l);
    } finally {
      handler.stop();
      deleteTree(dir);
    }
  }

  /** {@code --only}: one variant per round, no comparison (for profilers). */
  private void profileOne(Configuration conf, int stockPort, int hpcPort) throws Exception {
    for (int r = 0; r < rounds; r++) {
      double[] used = new double[1];
      double mbs = switch (only) {
        case "stock" -> measure(only, () -> fetchStock(stockPort), used);
        case "hpc" -> measure(only, () -> fetchHpc(conf, hpcPort), used);
        default -> measure(only, this::streamRaw, used);
      };
      System.out.printf(Locale.ROOT, "round %d (%s only): %8.1f MB/s (cpu s/GB: %.2f)%n", r + 1,
          only, mbs, used[0]);
    }
  }

  /**
   * Runs one fetch of everything; returns MB/s (10^6 bytes) and sets {@code cpuPerGb[0]} to the
   * CPU seconds the process (service and reducers together) spent per 10^9 bytes.
   */
  private double measure(String what, Callable<Long> fetchAll, double[] cpuPerGb)
      throws Exception {
    long c0 = processCpuNanos();
    long t0 = System.nanoTime();
    long bytes = fetchAll.call();
    double secs = (System.nanoTime() - t0) / 1e9;
    cpuPerGb[0] = (processCpuNanos() - c0) / 1e9 / (bytes / 1e9);
    long want = partition * maps * reducers;
    if (bytes != want) {
      throw new IllegalStateException(what + " moved " + bytes + " bytes, not " + want);
    }
    return bytes / 1e6 / secs;
  }

  private long inParallel(Callable<Long> perReducer, int n) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(n);
    try {
      List<Future<Long>> fs = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        final int reduce = r;
        fs.add(pool.submit(() -> {
          REDUCE.set(reduce);
          return perReducer.call();
        }));
      }
      long total = 0;
      for (Future<Long> f : fs) {
        total += f.get();
      }
      return total;
    } finally {
      pool.shutdownNow();
    }
  }

  private static final ThreadLocal<Integer> REDUCE = new ThreadLocal<>();

  /** Stock's protocol, as its Fetcher speaks it: HTTP GET, HMAC of the URL, ShuffleHeaders. */
  private long fetchStock(int port) throws Exception {
    SecretKey key = JobTokenSecretManager.createSecretKey(password);
    return inParallel(() -> {
      int reduce = REDUCE.get();
      byte[] buf = new byte[64 << 10];
      long bytes = 0;
      for (int from = 0; from < maps; from += MAPS_PER_FETCH) {
        List<String> batch = attempts.subList(from, Math.min(maps, from + MAPS_PER_FETCH));
        URL url = new URL("http://127.0.0.1:" + port + "/mapOutput?job=" + job + "&reduce="
            + reduce + "&map=" + String.join(",", batch));
        HttpURLConnection c = (HttpURLConnection) url.openConnection();
        String hash = SecureShuffleUtils.hashFromString(SecureShuffleUtils.buildMsgFrom(url),
            key);
        c.addRequestProperty(SecureShuffleUtils.HTTP_HEADER_URL_HASH, hash);
        c.addRequestProperty(ShuffleHeader.HTTP_HEADER_NAME,
            ShuffleHeader.DEFAULT_HTTP_HEADER_NAME);
        c.addRequestProperty(ShuffleHeader.HTTP_HEADER_VERSION,
            ShuffleHeader.DEFAULT_HTTP_HEADER_VERSION);
        if (c.getResponseCode() != 200) {
          throw new IOException("stock shuffle answered " + c.getResponseCode() + " "
              + c.getResponseMessage());
        }
        SecureShuffleUtils.verifyReply(c.getHeaderField(
            SecureShuffleUtils.HTTP_HEADER_REPLY_URL_HASH), hash, key);
        try (DataInputStream in = new DataInputStream(c.getInputStream())) {
          for (int i = 0; i < batch.size(); i++) {
            // stock's per-map header (its fields are package-private): map id, on-disk
            // length, raw length, reduce
            WritableUtils.readStringSafely(in, 1000);
            long length = WritableUtils.readVLong(in);
            WritableUtils.readVLong(in);
            WritableUtils.readVInt(in);
            bytes += drain(in, length, buf);
          }
        }
      }
      return bytes;
    }, reducers);
  }

  /** Ours: every reducer with its own transport (each reducer is its own JVM in a job). */
  /** The reducers' connections to the hpc service, and those by a same-host local socket. */
  private final java.util.concurrent.atomic.LongAdder hpcConnections =
      new java.util.concurrent.atomic.LongAdder();
  private final java.util.concurrent.atomic.LongAdder hpcLocal =
      new java.util.concurrent.atomic.LongAdder();

  private long fetchHpc(Configuration conf, int port) throws Exception {
    SecretKey key = JobTokenSecretManager.createSecretKey(password);
    return inParallel(() -> {
      int reduce = REDUCE.get();
      Configuration c = new Configuration(conf);
      c.setInt(ShuffleConfigKeys.PORT_KEY, port);
      byte[] buf = new byte[64 << 10];
      long bytes = 0;
      try (Transport t = TransportFactory.create(c);
          ShuffleFetchClient client = new ShuffleFetchClient(t, TransportConf.from(c),
              ShuffleConf.from(c), key)) {
        for (int from = 0; from < maps; from += MAPS_PER_FETCH) {
          List<String> batch = attempts.subList(from, Math.min(maps, from + MAPS_PER_FETCH));
          try (FetchSession s = client.open(bind, job.toString(), reduce, batch)) {
            for (int i = 0; i < batch.size(); i++) {
              try (InputStream in = s.stream(i)) {
                bytes += drain(in, s.partitions().get(i).partLength(), buf);
              }
            }
          }
        }
        hpcConnections.add(t.metrics().connectionsOpened());
        hpcLocal.add(t.metrics().localConnections());
      }
      return bytes;
    }, reducers);
  }

  /** The same bytes over plain loopback sockets: the machine's TCP ceiling for this pattern. */
  private long streamRaw() throws Exception {
    long perReducer = partition * maps;
    try (ServerSocket server = new ServerSocket()) {
      server.bind(new InetSocketAddress("127.0.0.1", 0));
      Thread acceptor = new Thread(() -> {
        List<Thread> senders = new ArrayList<>();
        try {
          for (int i = 0; i < reducers; i++) {
            Socket s = server.accept();
            Thread t = new Thread(() -> {
              byte[] buf = new byte[64 << 10];
              try (s; OutputStream out = s.getOutputStream()) {
                for (long left = perReducer; left > 0; left -= buf.length) {
                  out.write(buf, 0, (int) Math.min(buf.length, left));
                }
              } catch (IOException e) {
                // the reader reports the short count
              }
            });
            t.start();
            senders.add(t);
          }
        } catch (IOException e) {
          // closed
        }
      });
      acceptor.start();
      long total = inParallel(() -> {
        byte[] buf = new byte[64 << 10];
        try (Socket s = new Socket("127.0.0.1", server.getLocalPort());
            InputStream in = s.getInputStream()) {
          return drain(in, perReducer, buf);
        }
      }, reducers);
      acceptor.join();
      return total;
    }
  }

  private static long drain(InputStream in, long length, byte[] buf) throws IOException {
    long left = length;
    while (left > 0) {
      int n = in.read(buf, 0, (int) Math.min(buf.length, left));
      if (n < 0) {
        throw new IOException("stream ended " + left + " bytes early");
      }
      left -= n;
    }
    return length;
  }

  private void writeMapOutputs() throws IOException {
    byte[] chunk = new byte[1 << 20];
    new Random(42).nextBytes(chunk);
    String app = ApplicationId.newInstance(CLUSTER_TS, 1).toString();
    for (int m = 0; m < maps; m++) {
      String attempt = new TaskAttemptID(job.getJtIdentifier(), job.getId(), TaskType.MAP, m, 0)
          .toString();
      attempts.add(attempt);
      File out = new File(dir, "usercache/" + user + "/appcache/" + app + "/output/" + attempt);
      Files.createDirectories(out.toPath());
      SpillRecord spill = new SpillRecord(reducers);
      try (OutputStream o = new FileOutputStream(new File(out, "file.out"))) {
        for (int r = 0; r < reducers; r++) {
          for (long left = partition; left > 0; left -= chunk.length) {
            o.write(chunk, 0, (int) Math.min(chunk.length, left));
          }
          spill.putIndex(new IndexRecord(r * partition, partition, partition), r);
        }
      }
      spill.writeToFile(new Path(new File(out, "file.out.index").getPath()),
          new JobConf(new Configuration(false)));
    }
  }

  private ApplicationInitializationContext initContext() throws IOException {
    Token<JobTokenIdentifier> token = new Token<>(new byte[0], password,
        JobTokenIdentifier.KIND_NAME, new Text("bench"));
    DataOutputBuffer out = new DataOutputBuffer();
    token.write(out);
    return new ApplicationInitializationContext(user, ApplicationId.newInstance(CLUSTER_TS, 1),
        ByteBuffer.wrap(out.getData(), 0, out.getLength()));
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static double median(double[] v) {
    double[] c = v.clone();
    Arrays.sort(c);
    return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
  }

  private static void deleteTree(File f) throws IOException {
    try (var s = Files.walk(f.toPath())) {
      s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }
}
