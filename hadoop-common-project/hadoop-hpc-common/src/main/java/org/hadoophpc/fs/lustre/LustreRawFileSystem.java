/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.util.Progressable;
import org.apache.hadoop.util.StringUtils;
import org.hadoophpc.nativeio.LustreApi;
import org.hadoophpc.nativeio.LustreLayout;
import org.hadoophpc.nativeio.NativeIoException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code file://} with Lustre layouts for paths under {@link LustreConfigKeys#MOUNT_KEY}:
 * <ul>
 *   <li>files created there get the configured stripe size and count
 *       ({@code llapi_layout_file_create});</li>
 *   <li>a file's block size (and so its split size) is its stripe size, rounded up to a
 *       multiple of it that is at least {@code fs.local.block.size};</li>
 *   <li>{@link #getFileBlockLocations} names, for each block, the hosts next to the OSTs that
 *       hold its bytes (most bytes first), from the site's OST→host map.</li>
 * </ul>
 * Without liblustreapi, or for a mount that is not on Lustre, it logs one line saying so and
 * behaves exactly as {@link RawLocalFileSystem}. Used through {@link LustreFileSystem}.
 */
public class LustreRawFileSystem extends RawLocalFileSystem {
  private static final Logger LOG = LoggerFactory.getLogger(LustreRawFileSystem.class);
  /** Each distinct state line is logged once per process, not once per FileSystem instance. */
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();
  private static final int CREATE_MODE = 0666; // the process umask applies, as for open(2)

  private String mount; // absolute, no trailing slash; null: no Lustre treatment
  private LustreApi lustre; // non-null only when layouts are usable under mount
  private long stripeSize;
  private int stripeCount;
  private long minBlockSize;
  private OstHostMap ostHosts = OstHostMap.EMPTY;
  private String state = "no " + LustreConfigKeys.MOUNT_KEY + " set: plain file:// behaviour";

  @Override
  public void initialize(URI uri, Configuration conf) throws IOException {
    super.initialize(uri, conf);
    stripeSize = conf.getLongBytes(LustreConfigKeys.STRIPE_SIZE_KEY,
        LustreConfigKeys.STRIPE_SIZE_DEFAULT);
    if (stripeSize < 0 || stripeSize % LustreConfigKeys.STRIPE_ALIGNMENT != 0) {
      throw new IllegalArgumentException(LustreConfigKeys.STRIPE_SIZE_KEY + "=" + stripeSize
          + ": a Lustre stripe size must be a multiple of 64 KiB (65536), or 0 to inherit");
    }
    stripeCount = conf.getInt(LustreConfigKeys.STRIPE_COUNT_KEY,
        LustreConfigKeys.STRIPE_COUNT_DEFAULT);
    if (stripeCount < 0) {
      throw new IllegalArgumentException(LustreConfigKeys.STRIPE_COUNT_KEY + "=" + stripeCount
          + ": must be a stripe count (1 or more), or 0 to inherit");
    }
    minBlockSize = Math.max(1, conf.getLongBytes("fs.local.block.size", 32L << 20));
    ostHosts = readOstHosts(conf);

    String configured = conf.getTrimmed(LustreConfigKeys.MOUNT_KEY,
        LustreConfigKeys.MOUNT_DEFAULT);
    if (configured.isEmpty()) {
      return;
    }
    File dir = new File(configured);
    if (!dir.isDirectory()) {
      throw new FileNotFoundException(LustreConfigKeys.MOUNT_KEY + "=" + configured
          + ": no such directory; create it on the Lustre file system (or point the key at"
          + " an existing Lustre directory)");
    }
    mount = dir.getCanonicalPath();
    LustreApi api = LustreApi.probe(conf.getTrimmed(LustreConfigKeys.LIBRARY_KEY,
        LustreConfigKeys.LIBRARY_DEFAULT));
    if (!api.isAvailable()) {
      state = "Lustre layouts off under " + mount + ": " + api.reason();
    } else {
      try {
        api.layout(mount);
        lustre = api;
        state = "Lustre layouts on under " + mount + " through " + api.library()
            + " (stripe size " + (stripeSize == 0 ? "inherited" : stripeSize) + ", count "
            + (stripeCount == 0 ? "inherited" : stripeCount) + ", "
            + (ostHosts.isEmpty() ? "no OST→host map: stripe-aligned splits without host"
                + " locality" : ostHosts.size() + " OSTs mapped to hosts") + ")";
      } catch (NativeIoException e) {
        state = "Lustre layouts off under " + mount + ": "
            + (LustreApi.notOnLustre(e) ? "not on a Lustre file system (" + e.getMessage()
                + ")" : e.getMessage()) + "; plain POSIX behaviour";
      }
    }
    // a warning only when settings that need layouts would go unused
    boolean wanted = stripeSize != 0 || stripeCount != 0 || !ostHosts.isEmpty();
    if (LOGGED.add(state)) {
      if (lustre == null && wanted) {
        LOG.warn(state);
      } else {
        LOG.info(state);
      }
    }
  }

  private static OstHostMap readOstHosts(Configuration conf) throws IOException {
    List<String> entries = new ArrayList<>(StringUtils.getTrimmedStringCollection(
        conf.getTrimmed(LustreConfigKeys.OST_HOSTS_KEY, LustreConfigKeys.OST_HOSTS_DEFAULT)));
    String source = LustreConfigKeys.OST_HOSTS_KEY;
    String file = conf.getTrimmed(LustreConfigKeys.OST_HOSTS_FILE_KEY,
        LustreConfigKeys.OST_HOSTS_FILE_DEFAULT);
    if (!file.isEmpty()) {
      try {
        entries.addAll(Files.readAllLines(new File(file).toPath(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new IOException(LustreConfigKeys.OST_HOSTS_FILE_KEY + "=" + file
            + ": cannot read the OST→host map: " + e, e);
      }
      source += " / " + LustreConfigKeys.OST_HOSTS_FILE_KEY + "=" + file;
    }
    return OstHostMap.parse(entries, source);
  }

  /** The line logged at initialization: whether layouts are used, and if not, why. */
  public String lustreState() {
    return state;
  }

  /** True when paths under the mount get layouts (liblustreapi loaded, mount on Lustre). */
  public boolean layoutsEnabled() {
    return lustre != null;
  }

  private boolean onMount(Path p) {
    if (lustre == null) {
      return false;
    }
    String abs = pathToFile(p).getAbsolutePath();
    return abs.equals(mount) || abs.startsWith(mount + "/");
  }

  /** The layout of {@code p}, or null when it has none we can use. */
  LustreLayout layoutOf(Path p) {
    if (!onMount(p)) {
      return null;
    }
    try {
      return lustre.layout(pathToFile(p).getAbsolutePath());
    } catch (NativeIoException e) {
      LOG.debug("no layout for {}: {}", p, e.getMessage());
      return null;
    }
  }

  /** Block size of a file with stripe size {@code stripe}: a multiple of it, at least the min. */
  long blockSizeFor(long stripe) {
    long stripes = Math.max(1, (minBlockSize + stripe - 1) / stripe);
    return stripes * stripe;
  }

  private FileStatus withStripeBlockSize(FileStatus status) throws IOException {
    if (!status.isFile()) {
      return status;
    }
    LustreLayout layout = layoutOf(status.getPath());
    if (layout == null || layout.stripeSize() == 0) {
      return status;
    }
    return new StripedFileStatus(status, blockSizeFor(layout.stripeSize()));
  }

  @Override
  public FileStatus getFileStatus(Path f) throws IOException {
    return withStripeBlockSize(super.getFileStatus(f));
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    return withStripeBlockSize(super.getFileLinkStatus(f));
  }

  @Override
  public FileStatus[] listStatus(Path f) throws IOException {
    FileStatus[] statuses = super.listStatus(f);
    if (lustre != null) {
      for (int i = 0; i < statuses.length; i++) {
        statuses[i] = withStripeBlockSize(statuses[i]);
      }
    }
    return statuses;
  }

  @Override
  public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
      throws IOException {
    if (file == null || !file.isFile() || ostHosts.isEmpty()) {
      return super.getFileBlockLocations(file, start, len);
    }
    LustreLayout layout = layoutOf(file.getPath());
    if (layout == null || !layout.ostsKnown()) {
      return super.getFileBlockLocations(file, start, len);
    }
    return locations(layout, file.getLen(), start, len);
  }

  /** One location per block of {@code [start, start + len)}, hosts by bytes held. */
  BlockLocation[] locations(LustreLayout layout, long fileLength, long start, long len) {
    if (start < 0 || len < 0) {
      throw new IllegalArgumentException("Invalid start or len parameter");
    }
    long end = Math.min(fileLength, start + len);
    if (fileLength <= start) {
      return new BlockLocation[0];
    }
    long block = blockSizeFor(layout.stripeSize());
    List<BlockLocation> out = new ArrayList<>();
    for (long offset = (start / block) * block; offset < end; offset += block) {
      long length = Math.min(block, fileLength - offset);
      long[] bytes = layout.bytesPerStripe(offset, length);
      Map<String, Long> byHost = new LinkedHashMap<>();
      for (int stripe = 0; stripe < bytes.length; stripe++) {
        if (bytes[stripe] > 0) {
          for (String host : ostHosts.hosts(layout.ost(stripe))) {
            byHost.merge(host, bytes[stripe], Long::sum);
          }
        }
      }
      String[] hosts = byHost.entrySet().stream()
          .sorted((a, b) -> Long.compare(b.getValue(), a.getValue()))
          .map(Map.Entry::getKey).toArray(String[]::new);
      String[] names = Arrays.stream(hosts).map(h -> h + ":0").toArray(String[]::new);
      out.add(new BlockLocation(names, hosts, offset, length));
    }
    return out.toArray(new BlockLocation[0]);
  }

  // ---- creation: lay the file out first, then let RawLocalFileSystem open it ----

  @Override
  public FSDataOutputStream create(Path f, boolean overwrite, int bufferSize, short replication,
      long blockSize, Progressable progress) throws IOException {
    boolean laidOut = layOut(f, overwrite, true);
    return super.create(f, overwrite || laidOut, bufferSize, replication, blockSize, progress);
  }

  @Override
  public FSDataOutputStream create(Path f, FsPermission permission, boolean overwrite,
      int bufferSize, short replication, long blockSize, Progressable progress)
      throws IOException {
    boolean laidOut = layOut(f, overwrite, true);
    return super.create(f, permission, overwrite || laidOut, bufferSize, replication,
        blockSize, progress);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      boolean overwrite, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    boolean laidOut = layOut(f, overwrite, false);
    return super.createNonRecursive(f, permission, overwrite || laidOut, bufferSize,
        replication, blockSize, progress);
  }

  @Override
  public FSDataOutputStream createNonRecursive(Path f, FsPermission permission,
      EnumSet<CreateFlag> flags, int bufferSize, short replication, long blockSize,
      Progressable progress) throws IOException {
    boolean overwrite = flags.contains(CreateFlag.OVERWRITE);
    if (layOut(f, overwrite, false)) {
      flags = EnumSet.copyOf(flags);
      flags.add(CreateFlag.OVERWRITE);
    }
    return super.createNonRecursive(f, permission, flags, bufferSize, replication, blockSize,
        progress);
  }

  /**
   * Creates {@code f} empty with the configured layout when it is on the mount and a stripe
   * setting is given, so the caller's open keeps that layout. Returns true if it did. A file
   * that exists is replaced only when {@code overwrite} (else the caller's create fails as
   * usual). Checksum side files keep the directory default.
   */
  private boolean layOut(Path f, boolean overwrite, boolean createParent) throws IOException {
    if ((stripeSize == 0 && stripeCount == 0) || !onMount(f)
        || (f.getName().startsWith(".") && f.getName().endsWith(".crc"))) {
      return false;
    }
    File file = pathToFile(f);
    if (file.exists()) {
      if (!overwrite || file.isDirectory()) {
        return false; // the caller reports it
      }
      if (!file.delete()) {
        throw new IOException("cannot replace " + f + " to lay it out on Lustre");
      }
    }
    Path parent = f.getParent();
    if (createParent && parent != null && !mkdirs(parent)) {
      throw new IOException("Mkdirs failed to create " + parent);
    }
    try {
      lustre.create(file.getAbsolutePath(), stripeSize, stripeCount, CREATE_MODE);
      return true;
    } catch (NativeIoException e) {
      if (!createParent && e.errno() == 2) { // ENOENT: no parent, as createNonRecursive says
        throw new FileNotFoundException("Parent directory of " + f + " does not exist");
      }
      throw new IOException("cannot create " + f + " with stripe size " + stripeSize
          + " and count " + stripeCount + " (" + LustreConfigKeys.STRIPE_SIZE_KEY + ", "
          + LustreConfigKeys.STRIPE_COUNT_KEY + "): " + e.getMessage(), e);
    }
  }

  /**
   * A file's status with the block size its stripes give; owner, group and permission are
   * still read lazily from the wrapped status.
   */
  private static final class StripedFileStatus extends FileStatus {
    private static final long serialVersionUID = 1L;
    private final transient FileStatus base;

    StripedFileStatus(FileStatus base, long blockSize) throws IOException {
      super(base.getLen(), base.isDirectory(), base.getReplication(), blockSize,
          base.getModificationTime(), base.getAccessTime(), null, null, null,
          base.isSymlink() ? base.getSymlink() : null, base.getPath());
      this.base = base;
    }

    @Override
    public FsPermission getPermission() {
      return base.getPermission();
    }

    @Override
    public String getOwner() {
      return base.getOwner();
    }

    @Override
    public String getGroup() {
      return base.getGroup();
    }

    @Override
    public boolean equals(Object o) {
      return super.equals(o);
    }

    @Override
    public int hashCode() {
      return super.hashCode();
    }
  }
}
