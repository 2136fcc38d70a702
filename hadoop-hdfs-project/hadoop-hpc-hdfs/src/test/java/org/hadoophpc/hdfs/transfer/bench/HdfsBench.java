/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.hdfs.transfer.bench;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.hadoophpc.hdfs.transfer.RdmaDataTransferPlugin;
import org.hadoophpc.hdfs.transfer.RdmaSocketFactory;
import org.hadoophpc.hdfs.transfer.TransferConfigKeys;
import org.hadoophpc.hdfs.transfer.TransferMetrics;

/**
 * HDFS micro-benchmarks in the manner of OSU HiBD's OHB: sequential write and read latency and
 * throughput, random read latency, across file sizes, stock against hadoop-hpc in the same run:
 * two MiniDFSClusters of the same shape in this process, one of stock DataNodes (every hop TCP,
 * the pipeline's mirrors too) and one with the plugin (client, strict, and mirror hops over the
 * transport), rounds alternating (a round writes 64 MiB of files of its size and reads its file
 * as many times as make 256 MiB), after {@code --warmup} rounds of both at every size that are
 * not counted, all of them before the first counted round (the JIT's compilations: measured, a
 * 64 MiB write round ran ~240 compilations in the first rounds and ~70 after 20, and the
 * compiler threads took a third of the CPU of a 2-core machine in the first ones, so counted
 * rounds of the first size ran beside the compilation of the other sizes' paths; the
 * DataNodes' first connections). Each size's line says how long the JIT compiled during its
 * counted rounds. Prints RESULT lines (also the process's
 * CPU time and read/write system calls per byte written, which do not swing with the machine's
 * load as times do) and writes a CSV.
 *
 * <p>Usage: HdfsBench [--sizes 4m,16m,64m] [--rounds N] [--warmup N (5)] [--datanodes N]
 * [--replication N] [--preads N (2000)] [--transport tcp|verbs] [--dir DIR] [--csv FILE]
 * [--only stock|hpc [--turns FILE,0|1]] [--conf KEY=VALUE]...; or HdfsBench --report CSV...
 * (the RESULT lines
 * of the counted rounds several {@code --only} processes wrote)
 * ({@code --conf}: a setting for the DataNodes and both clients, e.g. the transfer windows;
 * {@code --only}: one variant in this JVM, its rounds to the CSV, no RESULT lines;
 * {@code --turns}: its rounds alternate with another process's through FILE, {@link BenchTurns})
 */
public final class HdfsBench {
  /**
   * The tcp transport's endpoint is the transfer port plus this. Both ports are chosen below
   * Linux's ephemeral range (32768 and up by default): a port picked from that range could be
   * taken by another process's outgoing connection (the partner JVM starting its cluster)
   * before the DataNode binds it.
   */
  private static final int OFFSET = 10000;
  private static final int FIRST_PORT = 10000;
  private static final int PORTS = 10000;
  /** Each round reads its file sequentially until this many bytes were read. */
  private static final long READ_BYTES = 256L << 20;
  /** Each round writes files of its size until this many bytes were written. */
  private static final long WRITE_BYTES = 64L << 20;

  private HdfsBench() {
  }

  public static void main(String[] args) throws Exception {
    List<Long> sizes = new ArrayList<>(List.of(4L << 20, 16L << 20, 64L << 20));
    int rounds = 5;
    int datanodes = 3;
    short replication = 3;
    int preads = 2000;
    int warmup = 5;
    String transport = "tcp";
    File dir = new File(System.getProperty("java.io.tmpdir"), "hdfs-bench-" + ProcessHandle
        .current().pid());
    File csv = null;
    String only = null;
    BenchTurns turns = null;
    List<String[]> settings = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--sizes":
          sizes.clear();
          for (String s : args[++i].split(",")) {
            sizes.add(parseSize(s));
          }
          break;
        case "--rounds": rounds = Integer.parseInt(args[++i]); break;
        case "--datanodes": datanodes = Integer.parseInt(args[++i]); break;
        case "--replication": replication = Short.parseShort(args[++i]); break;
        case "--preads": preads = Integer.parseInt(args[++i]); break;
        case "--warmup": warmup = Integer.parseInt(args[++i]); break;
        case "--transport": transport = args[++i]; break;
        case "--dir": dir = new File(args[++i]); break;
        case "--csv": csv = new File(args[++i]); break;
        case "--only": only = args[++i]; break;
        case "--turns": turns = new BenchTurns(args[++i]); break;
        case "--report":
          report(Arrays.copyOfRange(args, i + 1, args.length));
          return;
        case "--conf":
          String[] kv = args[++i].split("=", 2);
          if (kv.length != 2 || kv[0].isEmpty()) {
            throw new IllegalArgumentException("--conf needs KEY=VALUE, not " + args[i]);
          }
          settings.add(kv);
          break;
        default: throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (only != null && !only.equals(NAMES[0]) && !only.equals(NAMES[1])) {
      throw new IllegalArgumentException("--only takes stock or hpc, not " + only);
    }
    if (turns != null && only == null) {
      throw new IllegalArgumentException("--turns is for a process of one variant (--only)");
    }
    if (warmup < 0 || rounds < 1 || preads < 1) {
      throw new IllegalArgumentException("--warmup must be 0 or more, --rounds and --preads 1 or"
          + " more");
    }
    Configuration conf = new HdfsConfiguration();
    conf.set("hadoop.hpc.transport", transport);
    conf.setInt(TransferConfigKeys.PORT_OFFSET_KEY, "verbs".equals(transport) ? 0 : OFFSET);
    conf.setLong("dfs.blocksize", 128L << 20);
    // A file's close asks the NameNode to complete it, which fails until a DataNode reported
    // the last block; the client then sleeps 400 ms (stock default) before asking again. That
    // race, not the transfer, decided single writes here (16 MiB in 0.16 s or 0.56 s, either
    // client): both clients retry after 5 ms instead (--conf overrides it).
    conf.setInt("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", 5);
    for (String[] kv : settings) {
      conf.set(kv[0], kv[1]);
      System.out.println("setting " + kv[0] + "=" + kv[1]);
    }
    // Stock DataNodes: no plugin, so a write's mirrors go over TCP as in stock Hadoop (one
    // cluster for both would send the stock client's pipeline over the transport after its
    // first hop).
    Configuration stockSite = new Configuration(conf);
    stockSite.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(dir, "stock").getAbsolutePath());
    Configuration hpcSite = new Configuration(conf);
    hpcSite.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(dir, "hpc").getAbsolutePath());
    hpcSite.set("dfs.datanode.plugins", RdmaDataTransferPlugin.class.getName());
    boolean withStock = only == null || only.equals(NAMES[0]);
    boolean withHpc = only == null || only.equals(NAMES[1]);
    try (MiniDFSCluster stockCluster = withStock ? new MiniDFSCluster.Builder(stockSite)
            .numDataNodes(datanodes).build() : null;
        MiniDFSCluster hpcCluster = withHpc ? new MiniDFSCluster.Builder(hpcSite)
            .numDataNodes(datanodes).checkDataNodeAddrConfig(true)
            .dataNodeConfOverlays(overlays(datanodes)).build() : null) {
      Configuration stockConf = new Configuration(stockSite);
      stockConf.set("dfs.client.context", "bench-stock");
      Configuration hpcConf = new Configuration(hpcSite);
      hpcConf.set("dfs.client.context", "bench-hpc");
      hpcConf.set("hadoop.rpc.socket.factory.class.ClientProtocol",
          RdmaSocketFactory.class.getName());
      hpcConf.setBoolean(TransferConfigKeys.STREAM_FAILS_WITHOUT_TRANSPORT_KEY, true);
      FileSystem stock = null;
      FileSystem hpc = null;
      try {
        if (withStock) {
          stockCluster.waitActive();
          stock = FileSystem.newInstance(stockCluster.getURI(), stockConf);
        }
        if (withHpc) {
          hpcCluster.waitActive();
          hpc = FileSystem.newInstance(hpcCluster.getURI(), hpcConf);
        }
        run(stock, hpc, sizes, warmup, rounds, replication, preads, csv, turns);
      } finally {
        for (FileSystem fs : new FileSystem[] {stock, hpc}) {
          if (fs != null) {
            fs.close();
          }
        }
      }
      if (withHpc) {
        System.out.println("transfer counters: " + TransferMetrics.client());
        for (org.apache.hadoop.hdfs.server.datanode.DataNode dn : hpcCluster.getDataNodes()) {
          System.out.println("transfer counters: " + TransferMetrics.server(dn.getXferPort()));
        }
      }
    }
  }

  /**
   * The hpc DataNodes' addresses: transfer ports chosen here (the tcp transport listens at the
   * port plus {@link #OFFSET}), outside the ephemeral range.
   */
  private static Configuration[] overlays(int datanodes) throws IOException {
    Configuration[] overlays = new Configuration[datanodes];
    for (int i = 0; i < datanodes; i++) {
      overlays[i] = new Configuration(false);
      overlays[i].set("dfs.datanode.address", "127.0.0.1:" + xferPort());
      overlays[i].set("dfs.datanode.http.address", "127.0.0.1:0");
      overlays[i].set("dfs.datanode.ipc.address", "127.0.0.1:0");
    }
    return overlays;
  }

  /** What one round measured of one variant (stock or hpc) at one size. */
  private record Round(double writeMs, double readMs, double preadUs, double readCpuPerGb,
      double writeCpuPerGb, double writeCores, double writeCalls, double preadCalls) {
  }

  private static void run(FileSystem stock, FileSystem hpc, List<Long> sizes, int warmup,
      int rounds, short replication, int preads, File csv, BenchTurns turns) throws IOException {
    FileSystem[] fss = {stock, hpc};
    byte[] chunk = new byte[1 << 20];
    new Random(7).nextBytes(chunk);
    // every size's warm-up rounds before the first counted round
    for (long size : sizes) {
      for (int round = -warmup; round < 0; round++) {
        for (int k = 0; k < 2; k++) {
          int which = first(round, k);
          if (fss[which] != null) {
            round(fss[which], NAMES[which], size, round, rounds, replication, preads, chunk,
                turns);
          }
        }
      }
    }
    try (PrintWriter out = csv == null ? null : new PrintWriter(csv, "UTF-8")) {
      if (out != null) {
        out.println(CSV_HEADER);
      }
      for (long size : sizes) {
        Round[][] counted = new Round[2][rounds];
        long jit0 = compileMillis();
        for (int round = 0; round < rounds; round++) {
          for (int k = 0; k < 2; k++) {
            int which = first(round, k);
            if (fss[which] == null) {
              continue;
            }
            Round m = round(fss[which], NAMES[which], size, round, rounds, replication, preads,
                chunk, turns);
            counted[which][round] = m;
            if (out != null) {
              out.printf(Locale.ROOT, "%d,%s,%.2f,%.2f,%.1f,%.1f,%.1f,%.4f,%.4f,%.3f,%.2f,%.2f%n",
                  size, NAMES[which], m.writeMs(), m.readMs(), mbps(size, m.writeMs()),
                  mbps(size, m.readMs()), m.preadUs(), m.readCpuPerGb(), m.writeCpuPerGb(),
                  m.writeCores(), m.writeCalls(), m.preadCalls());
              out.flush();
            }
          }
        }
        System.out.printf(Locale.ROOT, "size %s: the JIT compiled for %d ms during its counted"
            + " rounds%n", human(size), compileMillis() - jit0);
        if (fss[0] != null && fss[1] != null) {
          report(size, counted[0], counted[1]);
        }
      }
    }
  }

  private static final String[] NAMES = {"stock", "hpc"};

  /** Which variant goes {@code k}-th in {@code round}: they take turns going first. */
  private static int first(int round, int k) {
    return Math.floorMod(round, 2) == 0 ? k : 1 - k;
  }

  /**
   * One round of one variant: writes files of {@code size} until WRITE_BYTES are written, reads
   * the first one sequentially until READ_BYTES are read, then {@code preads} 4 KiB preads of
   * it; prints a line (round below 0: a warm-up round). With {@code turns}, each file written is
   * a turn of its own, and the reads and preads one more: the two variants' processes then
   * alternate every few tens of milliseconds, and only this process's turns are measured.
   */
  private static Round round(FileSystem fs, String name, long size, int round, int rounds,
      short replication, int preads, byte[] chunk, BenchTurns turns) throws IOException {
    Path f = new Path("/bench/" + name + "-" + size + "-" + round);
    // a 16 MiB write takes ~0.1 s here: write files until WRITE_BYTES crossed (each the size
    // measured), so one GC or writeback hiccup does not decide a round
    int writes = (int) Math.max(1, WRITE_BYTES / size);
    long writeNanos = 0;
    long writeCpu = 0;
    long writeCalls = 0;
    for (int pass = 0; pass < writes; pass++) {
      Path target = pass == 0 ? f : new Path(f + "-w" + pass);
      await(turns);
      try {
        long t0 = System.nanoTime();
        long c0 = processCpuNanos();
        long[] io0 = ioCalls();
        try (FSDataOutputStream o = fs.create(target, true, 65536, replication, 128L << 20)) {
          for (long left = size; left > 0; left -= chunk.length) {
            o.write(chunk, 0, (int) Math.min(chunk.length, left));
          }
        }
        long[] io1 = ioCalls();
        writeCpu += processCpuNanos() - c0;
        writeNanos += System.nanoTime() - t0;
        writeCalls += io1[0] - io0[0] + io1[1] - io0[1];
      } finally {
        pass(turns);
      }
    }
    // a 64 MiB read takes tens of ms here: read the file until READ_BYTES crossed, so one GC or
    // scheduler hiccup does not decide a round
    int passes = (int) Math.max(1, READ_BYTES / size);
    await(turns);
    long t1;
    long c1;
    long t2;
    long c2;
    long t3;
    long[] io2;
    long[] io3;
    try {
      t1 = System.nanoTime();
      c1 = processCpuNanos();
      byte[] buf = new byte[1 << 20];
      for (int pass = 0; pass < passes; pass++) {
        try (FSDataInputStream in = fs.open(f)) {
          while (in.read(buf) > 0) {
            // read to the end
          }
        }
      }
      t2 = System.nanoTime();
      c2 = processCpuNanos();
      Random rnd = new Random(round);
      byte[] small = new byte[4096];
      try (FSDataInputStream in = fs.open(f)) {
        io2 = ioCalls(); // the preads' calls, without the open's
        for (int i = 0; i < preads; i++) {
          in.readFully(Math.floorMod(rnd.nextLong(), Math.max(1, size - small.length)), small);
        }
        io3 = ioCalls();
      }
      t3 = System.nanoTime();
      fs.delete(f, false);
      for (int pass = 1; pass < writes; pass++) {
        fs.delete(new Path(f + "-w" + pass), false);
      }
    } finally {
      pass(turns);
    }
    double mib = size / 1048576.0;
    // the whole process: client, DataNodes, NameNode (create, addBlock, complete)
    Round m = new Round(writeNanos / 1e6 / writes, (t2 - t1) / 1e6 / passes,
        (t3 - t2) / 1e3 / preads, (c2 - c1) / 1e9 / ((double) passes * size / 1e9),
        writeCpu / 1e9 / ((double) writes * size / 1e9), (double) writeCpu / writeNanos,
        writeCalls / (writes * mib), (io3[0] - io2[0] + io3[1] - io2[1]) / (double) preads);
    System.out.printf(Locale.ROOT, "size %s %s %-5s write %7.1f MB/s (%.1f cores busy),"
        + " read %7.1f MB/s, 4 KiB pread %7.1f us%n", human(size), round < 0 ? "warm-up"
        : "round " + (round + 1) + "/" + rounds, name, mbps(size, m.writeMs()), m.writeCores(),
        mbps(size, m.readMs()), m.preadUs());
    return m;
  }

  private static void await(BenchTurns turns) throws IOException {
    if (turns != null) {
      turns.await();
    }
  }

  private static void pass(BenchTurns turns) throws IOException {
    if (turns != null) {
      turns.pass();
    }
  }

  static final String CSV_HEADER = "size_bytes,path,write_ms,read_ms,write_mbps,read_mbps,"
      + "pread_us,read_cpu_s_per_gb,write_cpu_s_per_gb,write_cores,write_calls_per_mib,"
      + "pread_calls";

  /**
   * The RESULT lines of counted rounds written by several processes (each ran one variant,
   * {@code --only}): per size, medians over every round of each variant in the files.
   */
  private static void report(String[] files) throws IOException {
    java.util.TreeMap<Long, List<List<Round>>> bySize = new java.util.TreeMap<>();
    for (String f : files) {
      List<String> lines = java.nio.file.Files.readAllLines(java.nio.file.Path.of(f));
      for (String line : lines.subList(1, lines.size())) {
        String[] c = line.split(",");
        if (c.length < 12) {
          throw new IOException(f + ": not a CSV of this benchmark: " + line);
        }
        Round r = new Round(Double.parseDouble(c[2]), Double.parseDouble(c[3]),
            Double.parseDouble(c[6]), Double.parseDouble(c[7]), Double.parseDouble(c[8]),
            Double.parseDouble(c[9]), Double.parseDouble(c[10]), Double.parseDouble(c[11]));
        List<List<Round>> sides = bySize.computeIfAbsent(Long.parseLong(c[0]),
            k -> List.of(new ArrayList<>(), new ArrayList<>()));
        sides.get(NAMES[0].equals(c[1]) ? 0 : 1).add(r);
      }
    }
    for (java.util.Map.Entry<Long, List<List<Round>>> e : bySize.entrySet()) {
      List<List<Round>> sides = e.getValue();
      if (sides.get(0).isEmpty() || sides.get(1).isEmpty()) {
        throw new IOException("size " + human(e.getKey()) + " has rounds of only one variant");
      }
      System.out.printf(Locale.ROOT, "size %s: %d stock and %d hpc rounds%n", human(e.getKey()),
          sides.get(0).size(), sides.get(1).size());
      report(e.getKey(), sides.get(0).toArray(new Round[0]), sides.get(1).toArray(new Round[0]));
    }
  }

  /** The RESULT lines of one size: medians of its counted rounds, stock against hpc. */
  private static void report(long size, Round[] stock, Round[] hpc) {
    String s = human(size);
    double ws = median(stock, Round::writeMs);
    double wh = median(hpc, Round::writeMs);
    double rs = median(stock, Round::readMs);
    double rh = median(hpc, Round::readMs);
    double ps = median(stock, Round::preadUs);
    double ph = median(hpc, Round::preadUs);
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-write-latency size=%s stock=%.1fms"
        + " hpc=%.1fms ratio=%.2f%n", s, ws, wh, wh / ws);
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-read-latency size=%s stock=%.1fms"
        + " hpc=%.1fms ratio=%.2f%n", s, rs, rh, rh / rs);
    System.out.printf(Locale.ROOT, "RESULT hdfs-random-read-latency size=%s stock=%.1fus "
        + "hpc=%.1fus ratio=%.2f%n", s, ps, ph, ph / ps);
    ratioLine("hdfs-seq-read-cpu", s, "%.2fs/GB", median(stock, Round::readCpuPerGb),
        median(hpc, Round::readCpuPerGb), "client and DataNodes, one process");
    ratioLine("hdfs-seq-write-cpu", s, "%.2fs/GB", median(stock, Round::writeCpuPerGb),
        median(hpc, Round::writeCpuPerGb), "client, DataNodes and NameNode, one process");
    if (IO_CALLS_READABLE) {
      ratioLine("hdfs-seq-write-calls", s, "%.0f/MiB", median(stock, Round::writeCalls),
          median(hpc, Round::writeCalls), "read and write system calls of the process per MiB "
          + "written");
      ratioLine("hdfs-random-read-calls", s, "%.1f/pread", median(stock, Round::preadCalls),
          median(hpc, Round::preadCalls), "read and write system calls of the process per 4 KiB"
          + " pread");
    }
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-write-throughput size=%s stock=%.1fMB/s "
        + "hpc=%.1fMB/s speedup=%.2f%n", s, mbps(size, ws), mbps(size, wh), ws / wh);
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-read-throughput size=%s stock=%.1fMB/s "
        + "hpc=%.1fMB/s speedup=%.2f%n", s, mbps(size, rs), mbps(size, rh), rs / rh);
    // each variant's least disturbed round: slow stretches of this machine slow either side's
    // rounds by up to 4x (in CPU per byte), never speed one up
    double bs = min(stock, Round::writeMs);
    double bh = min(hpc, Round::writeMs);
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-write-throughput-best size=%s stock=%.1fMB/s"
        + " hpc=%.1fMB/s speedup=%.2f (the fastest counted round of each)%n", s, mbps(size, bs),
        mbps(size, bh), bs / bh);
    ratioLine("hdfs-seq-write-cpu-best", s, "%.2fs/GB", min(stock, Round::writeCpuPerGb),
        min(hpc, Round::writeCpuPerGb), "the counted round of each with the least");
    // round i of each side took turns with the other's round i (the same pair of processes,
    // file by file; or one process, round by round), so the machine's slow stretches fall on
    // both rounds of a pair: the median of the pairs' ratios
    int n = Math.min(stock.length, hpc.length);
    double[] speed = new double[n];
    double[] cpu = new double[n];
    for (int i = 0; i < n; i++) {
      speed[i] = stock[i].writeMs() / hpc[i].writeMs();
      cpu[i] = hpc[i].writeCpuPerGb() / stock[i].writeCpuPerGb();
    }
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-write-throughput-paired size=%s"
        + " speedup=%.2f (median over %d pairs of rounds that took turns, of hpc against stock)%n",
        s, median(speed), n);
    System.out.printf(Locale.ROOT, "RESULT hdfs-seq-write-cpu-paired size=%s ratio=%.2f"
        + " (the same pairs, CPU per byte)%n", s, median(cpu));
  }

  private static double median(double[] values) {
    double[] c = values.clone();
    Arrays.sort(c);
    return c.length == 0 ? Double.NaN : c.length % 2 == 1 ? c[c.length / 2]
        : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
  }

  private static double min(Round[] rounds, java.util.function.ToDoubleFunction<Round> f) {
    return Arrays.stream(rounds).mapToDouble(f).min().orElse(Double.NaN);
  }

  /** A RESULT line of a figure where lower is better: stock, hpc and hpc / stock. */
  private static void ratioLine(String name, String size, String unit, double stock, double hpc,
      String what) {
    System.out.printf(Locale.ROOT, "RESULT %s size=%s stock=" + unit + " hpc=" + unit
        + " ratio=%.2f (%s)%n", name, size, stock, hpc, hpc / stock, what);
  }

  /** Milliseconds the JIT has compiled so far, or 0 where the JVM does not tell. */
  private static long compileMillis() {
    java.lang.management.CompilationMXBean c =
        java.lang.management.ManagementFactory.getCompilationMXBean();
    return c != null && c.isCompilationTimeMonitoringSupported() ? c.getTotalCompilationTime()
        : 0;
  }

  private static final java.nio.file.Path PROC_IO = java.nio.file.Path.of("/proc/self/io");
  private static final boolean IO_CALLS_READABLE = java.nio.file.Files.isReadable(PROC_IO);

  /**
   * Read and write system calls of this process so far, all threads, ended ones too (Linux's
   * /proc/self/io syscr and syscw: socket and file reads and writes, not epoll or futex); zeros
   * where it cannot be read. Unlike times, these counts do not move with the machine's load.
   */
  static long[] ioCalls() {
    long[] rw = new long[2];
    if (!IO_CALLS_READABLE) {
      return rw;
    }
    try {
      for (String l : java.nio.file.Files.readAllLines(PROC_IO)) {
        if (l.startsWith("syscr:")) {
          rw[0] = Long.parseLong(l.substring(6).trim());
        } else if (l.startsWith("syscw:")) {
          rw[1] = Long.parseLong(l.substring(6).trim());
        }
      }
    } catch (IOException | NumberFormatException e) {
      return new long[2];
    }
    return rw;
  }

  /** CPU time of this process (client and DataNodes), all threads. */
  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory
        .getOperatingSystemMXBean()).getProcessCpuTime();
  }

  private static double mbps(long bytes, double ms) {
    return bytes / 1e6 / (ms / 1e3);
  }

  private static double median(Round[] rounds, java.util.function.ToDoubleFunction<Round> f) {
    double[] c = Arrays.stream(rounds).mapToDouble(f).toArray();
    Arrays.sort(c);
    return c.length % 2 == 1 ? c[c.length / 2] : (c[c.length / 2 - 1] + c[c.length / 2]) / 2;
  }

  private static long parseSize(String s) {
    String t = s.trim().toLowerCase(Locale.ROOT);
    long mult = 1;
    if (t.endsWith("k")) {
      mult = 1L << 10;
    } else if (t.endsWith("m")) {
      mult = 1L << 20;
    } else if (t.endsWith("g")) {
      mult = 1L << 30;
    }
    if (mult > 1) {
      t = t.substring(0, t.length() - 1);
    }
    return Long.parseLong(t) * mult;
  }

  private static String human(long size) {
    return size % (1L << 20) == 0 ? (size >> 20) + "m" : size % 1024 == 0 ? (size >> 10) + "k"
        : Long.toString(size);
  }

  /**
   * A free TCP port p whose endpoint p + OFFSET is free too, both below the ephemeral range
   * (random tries, so two benchmarks on one machine rarely meet).
   */
  private static int xferPort() throws IOException {
    InetAddress lo = InetAddress.getLoopbackAddress();
    java.util.Random r = new java.util.Random();
    for (int i = 0; i < 100; i++) {
      int port = FIRST_PORT + r.nextInt(PORTS);
      try (ServerSocket a = new ServerSocket(port, 1, lo);
          ServerSocket b = new ServerSocket(port + OFFSET, 1, lo)) {
        return port;
      } catch (IOException taken) {
        // next
      }
    }
    throw new IOException("no free port pair in " + FIRST_PORT + "-" + (FIRST_PORT + PORTS
        + OFFSET));
  }
}
