/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.PrintStream;

/**
 * {@code bin/hadoop checknative}: prints, one line per item and aligned like Hadoop's
 * {@code NativeLibraryChecker}, whether libhpcnative, RDMA devices and liblustreapi are usable
 * and, if not, why; then, after a blank line, Hadoop's own native lines
 * ({@link HadoopNativeCheck}) with what each missing one costs. {@code -a} exits 1 unless our
 * three are usable; the default exit code is 0 (stock exits 1 without libhadoop.so).
 */
public final class CheckNative {
  private static final String USAGE = "Usage: hadoop checknative [-a|-h]\n"
      + "  -a  check all: exit 1 unless libhpcnative, an RDMA device and liblustreapi are"
      + " available (Hadoop's own lines are informational)\n"
      + "  -h  print this message";

  private CheckNative() {
  }

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Prints the report to {@code out}; returns the process exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    boolean checkAll = false;
    for (String arg : args) {
      switch (arg) {
        case "-a":
          checkAll = true;
          break;
        case "-h":
        case "--help":
          out.println(USAGE);
          return 0;
        default:
          err.println("ERROR: unknown option " + arg);
          err.println(USAGE);
          return 1;
      }
    }

    out.println("hadoop-hpc native library checking:");
    boolean nativeOk = HpcNative.isAvailable();
    line(out, "hpcnative", nativeOk, nativeOk
        ? HpcNative.libraryPath().orElse("(java.library.path)") + " (version "
            + HpcNative.version().orElse("?") + ", abi " + HpcNative.ABI_VERSION + ")"
        : HpcNative.unavailabilityCause().getMessage());

    RdmaDevices rdma = RdmaDevices.probe();
    boolean rdmaOk = !rdma.isEmpty();
    line(out, "rdma", rdmaOk, rdmaOk ? rdma.devices().size() + " device(s)"
        : rdma.reason().orElse(""));
    for (RdmaDevice device : rdma.devices()) {
      if (device.problem().isPresent()) {
        detail(out, device.name() + ": " + device.problem().get().getMessage());
        continue;
      }
      for (RdmaPort port : device.ports()) {
        detail(out, device.name() + " " + port + " fw " + device.firmwareVersion());
      }
    }

    LustreApi lustre = LustreApi.probe();
    line(out, "liblustreapi", lustre.isAvailable(),
        lustre.isAvailable() ? lustre.library() : lustre.reason());

    out.println();
    new HadoopNativeCheck(new org.apache.hadoop.conf.Configuration()).print(out);
    return checkAll && !(nativeOk && rdmaOk && lustre.isAvailable()) ? 1 : 0;
  }

  private static void line(PrintStream out, String name, boolean available, String text) {
    out.printf("%-14s%-5s %s%n", name + ":", available, text);
  }

  private static void detail(PrintStream out, String text) {
    out.printf("%-14s%s%n", "", text);
  }
}
