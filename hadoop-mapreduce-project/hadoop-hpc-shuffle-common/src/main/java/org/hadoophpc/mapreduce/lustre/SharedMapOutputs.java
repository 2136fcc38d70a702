/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.mapreduce.lustre;

import java.io.IOException;
import java.net.URI;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.hadoophpc.fs.PrivateDirs;
import org.hadoophpc.mapreduce.shuffle.ShuffleConfigKeys;

/**
 * Map outputs published on the shared (Lustre) mount in the {@code no-local-disks} mode: one
 * output file and its index per successful map attempt, at
 * {@code <mapreduce.hpc.lustre.shuffle.dir>/<job id>/<map attempt id>/file.out[.index]}. A
 * reducer reads only the attempts the AM reported as succeeded, so failed and speculative
 * attempts never reach its input; the job's directory goes when the job ends. The job and
 * attempt directories are the job user's alone (700, {@link PrivateDirs}): one another user
 * made first is refused, by writers and readers ({@link #checkPublished}).
 */
public final class SharedMapOutputs {
  public static final String OUTPUT = "file.out";
  public static final String INDEX = "file.out.index";
  private static final Pattern JOB_ID = Pattern.compile("job_[0-9]+_[0-9]+");
  private static final Pattern ATTEMPT_ID =
      Pattern.compile("attempt_[0-9]+_[0-9]+_m_[0-9]+_[0-9]+");

  private final Path root;

  private SharedMapOutputs(Path root) {
    this.root = root;
  }

  /**
   * The directory {@code conf} names; throws {@link IllegalArgumentException} naming the key
   * when it is unset or not a local (POSIX) absolute path.
   */
  public static SharedMapOutputs from(Configuration conf) {
    String v = conf.getTrimmed(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY,
        ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_DEFAULT);
    if (v.isEmpty()) {
      throw new IllegalArgumentException(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + " is not set:"
          + " the " + LustreMode.NO_LOCAL_DISKS.value() + " mode needs a directory on the shared"
          + " Lustre mount, the same path on every node");
    }
    URI uri = URI.create(v.replace(" ", "%20"));
    String path = uri.getScheme() == null ? v
        : "file".equals(uri.getScheme()) ? uri.getPath() : null;
    if (path == null || !path.startsWith("/")) {
      throw new IllegalArgumentException(ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + "=" + v
          + " must be an absolute path on the shared mount (or a file:/// URI)");
    }
    return new SharedMapOutputs(Paths.get(path));
  }

  public Path root() {
    return root;
  }

  /**
   * Checks that the directory exists and this process may create entries in it; the message
   * names the key and what is wrong.
   */
  public void checkUsable() throws IOException {
    String key = ShuffleConfigKeys.LUSTRE_SHUFFLE_DIR_KEY + "=" + root;
    if (!Files.exists(root)) {
      throw new IOException(key + " does not exist: create it on the shared Lustre mount (same"
          + " path on every node), or fix the key");
    }
    if (!Files.isDirectory(root)) {
      throw new IOException(key + " is not a directory");
    }
    if (!Files.isWritable(root) || !Files.isExecutable(root)) {
      throw new IOException(key + " is not writable by " + System.getProperty("user.name"));
    }
    PrivateDirs.checkRoot(root);
  }

  public Path jobDir(String jobId) {
    return root.resolve(checked(JOB_ID, jobId, "job id"));
  }

  public Path attemptDir(String jobId, String mapAttempt) {
    return jobDir(jobId).resolve(checked(ATTEMPT_ID, mapAttempt, "map attempt id"));
  }

  public Path output(String jobId, String mapAttempt) {
    return attemptDir(jobId, mapAttempt).resolve(OUTPUT);
  }

  public Path index(String jobId, String mapAttempt) {
    return attemptDir(jobId, mapAttempt).resolve(INDEX);
  }

  /**
   * Publishes a finished map's output and index from the task's local directory in its attempt
   * directory: hard links when both are on the same file system (the mode's setup: the
   * NodeManagers' local dirs on Lustre; no bytes move, and the stock shuffle can still serve the
   * originals), copies otherwise. The index goes last, so a complete index means a complete
   * output. Returns true when it linked.
   */
  public boolean publish(String jobId, String mapAttempt, Path output, Path index)
      throws IOException {
    Path dir = PrivateDirs.create(root, attemptDir(jobId, mapAttempt));
    boolean linked = place(output, dir.resolve(OUTPUT), true);
    return place(index, dir.resolve(INDEX), linked) && linked;
  }

  /** Links {@code src} at {@code dst} (when {@code link}) or copies it; true when linked. */
  private static boolean place(Path src, Path dst, boolean link) throws IOException {
    Files.deleteIfExists(dst); // a re-run of the same attempt id (AM restart)
    if (link) {
      try {
        Files.createLink(dst, src);
        return true;
      } catch (IOException | UnsupportedOperationException e) {
        // another file system (EXDEV), or no hard links: copy
      }
    }
    Path tmp = dst.resolveSibling(dst.getFileName() + ".tmp");
    Files.copy(src, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, dst, StandardCopyOption.ATOMIC_MOVE);
    return false;
  }

  /**
   * Refuses to read {@code mapAttempt}'s output unless its job and attempt directories are this
   * user's alone (700) and its output and index are files of this user's, no links: what the
   * job's maps published (they run as the same user as its reducers), not something another
   * user put there. The NodeManager's shuffle checks local outputs the same way (SecureIOUtils).
   */
  public void checkPublished(String jobId, String mapAttempt) throws IOException {
    PrivateDirs.checkPrivateDir(jobDir(jobId));
    PrivateDirs.checkPrivateDir(attemptDir(jobId, mapAttempt));
    PrivateDirs.checkOwnedFile(index(jobId, mapAttempt));
    PrivateDirs.checkOwnedFile(output(jobId, mapAttempt));
  }

  /** Deletes everything {@code jobId} published; true when there was something to delete. */
  public boolean deleteJob(String jobId) throws IOException {
    Path job = jobDir(jobId);
    if (!Files.exists(job)) {
      return false;
    }
    Files.walkFileTree(job, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.deleteIfExists(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (e instanceof NoSuchFileException) {
          return FileVisitResult.CONTINUE; // deleted by another node's service meanwhile
        }
        throw e;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
        if (e != null && !(e instanceof NoSuchFileException)) {
          throw e;
        }
        try {
          Files.deleteIfExists(dir);
        } catch (DirectoryNotEmptyException x) {
          throw new IOException(dir + " is not empty after deleting its files (a task of the"
              + " ended job still writing?)", x);
        }
        return FileVisitResult.CONTINUE;
      }
    });
    return true;
  }

  private static String checked(Pattern p, String id, String what) {
    if (id == null || !p.matcher(id).matches()) {
      throw new IllegalArgumentException("'" + id + "' is not a " + what);
    }
    return id;
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
