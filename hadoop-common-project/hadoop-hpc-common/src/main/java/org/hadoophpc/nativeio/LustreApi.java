/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Whether liblustreapi, with the {@code llapi_layout_*} calls the Lustre layout features need,
 * can be used in this process. libhpcnative reaches it only through {@code dlopen}, so nodes
 * without a Lustre client load fine and get a {@link #reason()} instead.
 *
 * <p>Candidates, first match wins: the system property {@value #LIBRARY_PROPERTY}, else the
 * environment variable {@value #LIBRARY_ENV} (each a comma-separated list of sonames or paths),
 * else {@link #DEFAULT_CANDIDATES}. The first complete library stays open in libhpcnative for
 * the layout calls. Immutable result; {@link #probe()} never throws.
 */
public final class LustreApi {
  public static final String LIBRARY_PROPERTY = "hadoop.hpc.lustreapi.lib";
  public static final String LIBRARY_ENV = "HADOOP_HPC_LUSTREAPI_LIB";
  public static final List<String> DEFAULT_CANDIDATES =
      List.of("liblustreapi.so.1", "liblustreapi.so");

  private static final String FALLBACK = ": Lustre layout features use plain POSIX behaviour";

  private final boolean available;
  private final String library;
  private final List<String> missingSymbols;
  private final String reason;

  private LustreApi(boolean available, String library, List<String> missingSymbols,
      String reason) {
    this.available = available;
    this.library = library;
    this.missingSymbols = List.copyOf(missingSymbols);
    this.reason = reason;
  }

  /** Probes the configured candidates (see the class comment). */
  public static LustreApi probe() {
    return probe(candidates(System.getProperty(LIBRARY_PROPERTY), System.getenv(LIBRARY_ENV)));
  }

  /**
   * Probes {@code configured} (a comma-separated list, e.g. a configuration value) when it is
   * set, else what {@link #probe()} would.
   */
  public static LustreApi probe(String configured) {
    String first = configured != null && !configured.isBlank() ? configured
        : System.getProperty(LIBRARY_PROPERTY);
    return probe(candidates(first, System.getenv(LIBRARY_ENV)));
  }

  /** Probes {@code candidates} in order; the first complete library wins. */
  static LustreApi probe(List<String> candidates) {
    if (!HpcNative.isAvailable()) {
      return new LustreApi(false, null, List.of(), "liblustreapi not probed: libhpcnative "
          + "unavailable (" + HpcNative.unavailabilityCause().getMessage() + ")" + FALLBACK);
    }
    List<String> notFound = new ArrayList<>();
    LustreApi incomplete = null;
    for (String candidate : candidates) {
      String[] f;
      try {
        f = NativeMethods.probeLustre(candidate).split("\t", 3);
      } catch (NativeIoException e) {
        notFound.add(e.getMessage());
        continue;
      }
      List<String> missing = f[1].isEmpty() ? List.of() : Arrays.asList(f[1].split(","));
      switch (f[0]) {
        case "AVAILABLE":
          return new LustreApi(true, candidate, List.of(), null);
        case "INCOMPLETE":
          if (incomplete == null) {
            incomplete = new LustreApi(false, candidate, missing, "liblustreapi at "
                + candidate + " lacks " + String.join(", ", missing) + " (" + f[2] + ")"
                + FALLBACK + "; install a Lustre client with the llapi_layout API (2.10+)");
          }
          break;
        default:
          notFound.add("dlopen " + f[2]);
          break;
      }
    }
    if (incomplete != null) {
      return incomplete;
    }
    String tried = candidates.isEmpty() ? "no candidates given" : String.join("; ", notFound);
    String library = candidates.isEmpty() ? null : candidates.get(0);
    return new LustreApi(false, library, List.of(),
        "liblustreapi not found (" + tried + ")" + FALLBACK);
  }

  /** The candidate list from the property or environment value, else the defaults. */
  static List<String> candidates(String property, String env) {
    for (String value : new String[] {property, env}) {
      if (value != null && !value.isBlank()) {
        List<String> parsed = Arrays.stream(value.split(",")).map(String::trim)
            .filter(s -> !s.isEmpty()).collect(Collectors.toList());
        if (!parsed.isEmpty()) {
          return List.copyOf(parsed);
        }
      }
    }
    return DEFAULT_CANDIDATES;
  }

  /**
   * The layout of {@code path}. Throws {@link NativeIoException} with liblustreapi's errno:
   * {@code ENOTTY} or {@code ENODATA} when the path is not on Lustre ({@link #notOnLustre}),
   * {@code ENOENT} when it does not exist.
   *
   * @throws IllegalStateException when this probe found no usable library
   */
  public LustreLayout layout(String path) throws NativeIoException {
    requireAvailable();
    return LustreLayout.fromNative(NativeMethods.lustreLayout(path));
  }

  /**
   * Creates {@code path}, which must not exist, with {@code stripeSize} bytes per stripe (a
   * multiple of 64 KiB) over {@code stripeCount} OSTs; 0 for either keeps the directory's
   * default. The file is left empty and closed; its layout stays when it is reopened.
   *
   * @throws IllegalStateException when this probe found no usable library
   */
  public void create(String path, long stripeSize, int stripeCount, int mode)
      throws NativeIoException {
    requireAvailable();
    NativeMethods.lustreCreate(path, stripeSize, stripeCount, mode);
  }

  /** True when {@code e} says the path is not on a Lustre file system. */
  public static boolean notOnLustre(NativeIoException e) {
    return e.errno() == ENOTTY || e.errno() == ENODATA || e.errno() == EOPNOTSUPP;
  }

  private static final int ENOTTY = 25;
  private static final int ENODATA = 61;
  private static final int EOPNOTSUPP = 95;

  private void requireAvailable() {
    if (!available) {
      throw new IllegalStateException(reason);
    }
  }

  /** True when a liblustreapi with every needed symbol is loaded. */
  public boolean isAvailable() {
    return available;
  }

  /**
   * The library that was loaded; when unavailable, the incomplete library found or the first
   * candidate tried (null if native code is unavailable).
   */
  public String library() {
    return library;
  }

  /** The {@code llapi_layout_*} symbols an incomplete library lacks; empty otherwise. */
  public List<String> missingSymbols() {
    return missingSymbols;
  }

  /** Why it is unavailable and what happens instead; null when available. */
  public String reason() {
    return reason;
  }

  @Override
  public boolean equals(Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof LustreApi)) {
      return false;
    }
    LustreApi other = (LustreApi) o;
    return available == other.available && Objects.equals(library, other.library)
        && missingSymbols.equals(other.missingSymbols) && Objects.equals(reason, other.reason);
  }

  @Override
  public int hashCode() {
    return Objects.hash(available, library, missingSymbols, reason);
  }

  @Override
  public String toString() {
    return available ? "liblustreapi " + library : reason;
  }
}
