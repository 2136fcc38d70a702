/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The site's OST index → hosts map ({@link LustreConfigKeys#OST_HOSTS_KEY}). Immutable.
 */
final class OstHostMap {
  static final OstHostMap EMPTY = new OstHostMap(Map.of());

  private final Map<Long, List<String>> hosts;

  private OstHostMap(Map<Long, List<String>> hosts) {
    this.hosts = hosts;
  }

  /**
   * Parses entries such as {@code 0-3=oss1;oss2} (see the key's comment). {@code source} names
   * where they came from, for the error message.
   *
   * @throws IllegalArgumentException naming the source and the bad entry
   */
  static OstHostMap parse(Iterable<String> entries, String source) {
    Map<Long, List<String>> map = new HashMap<>();
    for (String raw : entries) {
      String entry = raw.trim();
      if (entry.isEmpty() || entry.startsWith("#")) {
        continue;
      }
      int eq = entry.indexOf('=');
      List<String> names = new ArrayList<>();
      if (eq > 0) {
        for (String h : entry.substring(eq + 1).split(";")) {
          if (!h.trim().isEmpty()) {
            names.add(h.trim());
          }
        }
      }
      if (eq <= 0 || names.isEmpty()) {
        throw bad(source, entry, "expected ost=host or first-last=host[;host...]");
      }
      String range = entry.substring(0, eq).trim();
      int dash = range.indexOf('-');
      long first;
      long last;
      try {
        first = Long.parseLong((dash < 0 ? range : range.substring(0, dash)).trim());
        last = dash < 0 ? first : Long.parseLong(range.substring(dash + 1).trim());
      } catch (NumberFormatException e) {
        throw bad(source, entry, "OST indexes must be numbers");
      }
      if (first < 0 || last < first || last - first > 65535) {
        throw bad(source, entry, "OST range " + range + " is empty, negative or too wide");
      }
      for (long ost = first; ost <= last; ost++) {
        map.merge(ost, List.copyOf(names), (a, b) -> {
          List<String> both = new ArrayList<>(a);
          b.stream().filter(h -> !both.contains(h)).forEach(both::add);
          return List.copyOf(both);
        });
      }
    }
    return map.isEmpty() ? EMPTY : new OstHostMap(Collections.unmodifiableMap(map));
  }

  private static IllegalArgumentException bad(String source, String entry, String why) {
    return new IllegalArgumentException(source + ": bad entry '" + entry + "': " + why);
  }

  boolean isEmpty() {
    return hosts.isEmpty();
  }

  /** The hosts next to {@code ost}; empty when the map does not name it. */
  List<String> hosts(long ost) {
    return hosts.getOrDefault(ost, List.of());
  }

  int size() {
    return hosts.size();
  }
}
