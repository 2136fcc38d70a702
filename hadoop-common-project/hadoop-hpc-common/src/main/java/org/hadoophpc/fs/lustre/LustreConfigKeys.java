/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

/**
 * Configuration keys of the Lustre binding ({@link LustreFileSystem}), all read once when the
 * file system is initialized (core-site.xml). Every key is also in {@code hpc-lustre-default.xml}
 * in this jar, the reference for users ({@code LustreConfigKeysTest} keeps the two in step); it
 * is not a default resource.
 */
public final class LustreConfigKeys {
  private LustreConfigKeys() {
  }

  /**
   * The Lustre directory hadoop-hpc works in (the mode templates set it). Paths under it get
   * the layout treatment; paths elsewhere behave as on {@code file://}. Unset: none.
   */
  public static final String MOUNT_KEY = "hadoop.hpc.lustre.mount";
  public static final String MOUNT_DEFAULT = "";

  /** Stripe size of files created under the mount, bytes (multiple of 64 KiB); 0: inherit. */
  public static final String STRIPE_SIZE_KEY = "hadoop.hpc.lustre.stripe.size";
  public static final long STRIPE_SIZE_DEFAULT = 0;

  /** Stripe count of files created under the mount (at most the OST count); 0: inherit. */
  public static final String STRIPE_COUNT_KEY = "hadoop.hpc.lustre.stripe.count";
  public static final int STRIPE_COUNT_DEFAULT = 0;

  /**
   * Which hosts sit next to which OSTs, for split locality: comma-separated entries
   * {@code ost=host} or {@code first-last=host}, several hosts joined by {@code ;}
   * (e.g. {@code 0-3=oss1;oss2,4-7=oss3;oss4}). Empty: no host locality, stripe-aligned splits.
   */
  public static final String OST_HOSTS_KEY = "hadoop.hpc.lustre.ost.hosts";
  public static final String OST_HOSTS_DEFAULT = "";

  /** A file with the same entries as {@link #OST_HOSTS_KEY}, one per line, {@code #} comments. */
  public static final String OST_HOSTS_FILE_KEY = "hadoop.hpc.lustre.ost.hosts.file";
  public static final String OST_HOSTS_FILE_DEFAULT = "";

  /**
   * liblustreapi to load (comma-separated sonames or paths); empty: the system property or
   * environment of {@link org.hadoophpc.nativeio.LustreApi}, then liblustreapi.so.1.
   */
  public static final String LIBRARY_KEY = "hadoop.hpc.lustreapi.lib";
  public static final String LIBRARY_DEFAULT = "";

  /**
   * Whether {@code file://} writes and checks Hadoop's {@code .crc} side files, as stock
   * {@code LocalFileSystem} does. false: none (Lustre checksums data between client and OSTs
   * itself), half the files and metadata operations, no CRC pass over the data in Java.
   */
  public static final String CHECKSUM_FILES_KEY = "hadoop.hpc.lustre.checksum.files";
  public static final boolean CHECKSUM_FILES_DEFAULT = true;

  /** Lustre's granularity for stripe sizes. */
  public static final long STRIPE_ALIGNMENT = 64 * 1024;
}
