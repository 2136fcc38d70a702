/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.io.PrintStream;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.crypto.OpensslCipher;
import org.apache.hadoop.io.compress.ZStandardCodec;
import org.apache.hadoop.io.compress.bzip2.Bzip2Factory;
import org.apache.hadoop.io.compress.zlib.ZlibFactory;
import org.apache.hadoop.io.erasurecode.ErasureCodeNative;
import org.apache.hadoop.io.nativeio.NativeIO;
import org.apache.hadoop.util.NativeCodeLoader;

/**
 * The second half of {@code bin/hadoop checknative}: Apache Hadoop's own native lines, as its
 * {@code NativeLibraryChecker} prints them ({@code hadoop}, {@code zlib}, {@code zstd},
 * {@code bzip2}, {@code openssl}, {@code ISA-L}, {@code PMDK}), each asked through the same
 * public calls, and under every item that is missing what a cluster loses without it and what
 * takes its place. The tarball's {@code lib/native/libhadoop.so} is hadoop-hpc's own
 * implementation of Hadoop's natives (rdma-native; Apache publishes theirs only inside its binary
 * tarball): NativeIO, bulk CRC and the JNI group mapping, no codecs, OpenSSL, ISA-L or PMDK.
 */
final class HadoopNativeCheck {
  private final Configuration conf;

  HadoopNativeCheck(Configuration conf) {
    this.conf = conf;
  }

  /** Prints the section; returns whether libhadoop.so is loaded. */
  boolean print(PrintStream out) {
    out.println("Native library checking (Apache Hadoop's own, NativeLibraryChecker):");
    boolean hadoop = NativeCodeLoader.isNativeCodeLoaded();
    line(out, "hadoop:", hadoop, hadoop ? NativeCodeLoader.getLibraryName() : "");
    if (!hadoop) {
      cost(out, "libhadoop.so did not load (the tarball has it in lib/native unless built with"
          + " -Dnative.skip=true; see the user guide, 'Native libraries'). Without it:");
      cost(out, "- no short-circuit local reads (dfs.client.read.shortcircuit needs its domain"
          + " sockets): a task reads a local block through its DataNode");
      cost(out, "- checksums use the JDK's CRC32/CRC32C (intrinsics), not Hadoop's native bulk"
          + " CRC");
      cost(out, "- Hadoop refuses Kerberos-secured shuffle and log aggregation (SecureIOUtils:"
          + " 'Secure IO is not possible without native code extensions')");
      cost(out, "- mlock and fadvise for DataNodes come from libhpcnative instead (bin/hdfs"
          + " datanode installs it: HHH's RAM disk and centralized caching keep working)");
    }
    boolean zlib = hadoop && ZlibFactory.isNativeZlibLoaded(conf);
    item(out, "zlib:", zlib, zlib ? ZlibFactory.getLibraryName() : "",
        "gzip/deflate codecs use the JDK's java.util.zip (itself zlib): same output");
    boolean zstd = hadoop && NativeCodeLoader.buildSupportsZstd()
        && ZStandardCodec.isNativeCodeLoaded();
    item(out, "zstd  :", zstd, zstd ? ZStandardCodec.getLibraryName() : "",
        "ZStandardCodec fails ('native zStandard library not available'): a job or file with"
        + " zstd compression cannot run here; use snappy (snappy-java ships) or gzip");
    boolean bzip2 = hadoop && Bzip2Factory.isNativeBzip2Loaded(conf);
    item(out, "bzip2:", bzip2, bzip2 ? Bzip2Factory.getLibraryName(conf) : "",
        "BZip2Codec uses Hadoop's Java bzip2: same output, several times slower");
    String ssl = hadoop ? OpensslCipher.getLoadingFailureReason() : "";
    item(out, "openssl:", ssl == null, ssl == null ? OpensslCipher.getLibraryName() : ssl,
        "AES-CTR for HDFS encryption zones and encrypted transfer uses the JDK's JCE cipher"
        + " (hadoop.security.crypto.codec.classes falls through to Jce)");
    String isal = hadoop ? ErasureCodeNative.getLoadingFailureReason() : "";
    item(out, "ISA-L:", isal == null, isal == null ? ErasureCodeNative.getLibraryName() : isal,
        "erasure-coded files use Hadoop's Java Reed-Solomon coders: slower encoding and"
        + " reconstruction, same data");
    boolean pmdk = hadoop && NativeIO.POSIX.isPmdkAvailable();
    item(out, "PMDK:", pmdk, pmdk ? NativeIO.POSIX.Pmem.getPmdkLibPath()
        : hadoop ? NativeIO.POSIX.getPmdkSupportStateMessage() : "",
        "no persistent-memory cache for HDFS centralized caching (dfs.datanode.pmem.cache.dirs);"
        + " the DRAM cache works");
    return hadoop;
  }

  /** One line as Hadoop prints it: name padded to 9, then true/false and the detail. */
  private static void line(PrintStream out, String name, boolean available, String text) {
    out.printf("%-9s%b %s%n", name, available, text);
  }

  /** An item's line, then, when it is missing, what takes its place. */
  private static void item(PrintStream out, String name, boolean available, String text,
      String costWhenMissing) {
    line(out, name, available, text);
    if (!available) {
      cost(out, costWhenMissing);
    }
  }

  private static void cost(PrintStream out, String text) {
    out.printf("%9s%s%n", "", text);
  }
}
