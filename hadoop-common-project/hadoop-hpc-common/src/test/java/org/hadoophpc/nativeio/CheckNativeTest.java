/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

class CheckNativeTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return CheckNative.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private List<String> lines() {
    return Arrays.asList(out.toString(StandardCharsets.UTF_8).split("\n"));
  }

  private String line(String prefix) {
    return lines().stream().filter(l -> l.startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("no line starting '" + prefix + "' in " + out));
  }

  @Test
  void reportHasOneAlignedLinePerItem() {
    assertEquals(0, run());

    assertEquals("hadoop-hpc native library checking:", lines().get(0));
    for (String prefix : new String[] {"hpcnative:    ", "rdma:         ", "liblustreapi: "}) {
      String l = line(prefix);
      String rest = l.substring(prefix.length());
      assertTrue(rest.startsWith("true  ") || rest.startsWith("false "), l);
    }
  }

  @Test
  void loadedLibraryShowsPathVersionAndAbi() {
    NativeTestSupport.assumeNativeAvailable();
    run();

    assertEquals("hpcnative:    true  " + HpcNative.libraryPath().orElseThrow()
        + " (version 0.1.0, abi " + HpcNative.ABI_VERSION + ")", line("hpcnative:"));
  }

  @Test
  void missingItemsShowTheirReason() {
    run();

    if (!RdmaDevices.probe().devices().isEmpty()) {
      return;
    }
    String rdma = line("rdma:");
    assertTrue(rdma.startsWith("rdma:         false "), rdma);
    assertTrue(rdma.contains(RdmaDevices.probe().reason().orElseThrow()), rdma);
  }

  @Test
  void checkAllFailsUnlessEverythingIsAvailable() {
    int code = run("-a");

    boolean allTrue = lines().stream().skip(1).takeWhile(l -> !l.isEmpty())
        .filter(l -> !l.startsWith(" "))
        .allMatch(l -> l.substring(14).startsWith("true"));
    assertEquals(allTrue ? 0 : 1, code, out.toString(StandardCharsets.UTF_8));
    if (!LustreApi.probe().isAvailable()) {
      assertEquals(1, code); // this build host: no Lustre client
    }
  }

  @Test
  void hadoopsOwnLinesFollowWithWhatEachMissingOneCosts() {
    assertEquals(0, run());

    List<String> all = lines();
    int header = all.indexOf(
        "Native library checking (Apache Hadoop's own, NativeLibraryChecker):");
    assertTrue(header > 0 && all.get(header - 1).isEmpty(), out.toString(StandardCharsets.UTF_8));
    boolean hadoop = org.apache.hadoop.util.NativeCodeLoader.isNativeCodeLoaded();
    assertTrue(line("hadoop:  ").startsWith("hadoop:  " + hadoop), line("hadoop:"));
    for (String p : new String[] {"zlib:    ", "zstd  :  ", "bzip2:   ", "openssl: ",
        "ISA-L:   ", "PMDK:    "}) {
      String l = line(p);
      assertTrue(l.substring(p.length()).matches("(true|false)( .*)?"), l);
    }
    if (!hadoop) { // unit tests run without libhadoop.so: the report says what that costs
      String text = out.toString(StandardCharsets.UTF_8);
      assertTrue(text.contains("libhadoop.so did not load"), text);
      assertTrue(text.contains("Secure IO is not possible"), text);
      assertTrue(text.contains("no short-circuit local reads"), text);
      assertTrue(text.contains("ZStandardCodec fails"), text);
    }
  }

  @Test
  void helpPrintsUsage() {
    assertEquals(0, run("-h"));
    assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: hadoop checknative"));
  }

  @Test
  void unknownOptionIsAnError() {
    assertEquals(1, run("-x"));
    assertTrue(err.toString(StandardCharsets.UTF_8).startsWith("ERROR: unknown option -x"));
  }
}
