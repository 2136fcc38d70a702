/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.tools;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * Configuration queries for the {@code bin/} and {@code sbin/} scripts, answered in one JVM.
 *
 * <p>{@code get KEY...} prints one {@code KEY=VALUE} line per key (a script otherwise pays one
 * JVM start per {@code hdfs getconf -confKey}). {@code ports DAEMON} tries to bind every address
 * the daemon will listen on and, when one is taken, prints which port, which key configures it and
 * which daemon wanted it, and exits 1: a clash is reported before the daemon is launched, not
 * found later in its log.
 *
 * <p>Reads {@code core/hdfs/yarn/mapred-default.xml} and their {@code -site.xml} from the
 * classpath by name, so it needs Hadoop's jars but none of its server classes. Not thread-safe;
 * a command-line tool.
 */
public final class DaemonCheck {

  /** A listener a daemon opens: the key that configures it and the bind-host key, if any. */
  record Listener(String addressKey, String bindHostKey) {}

  private static final Map<String, List<Listener>> LISTENERS = new LinkedHashMap<>();

  // The hpc shuffle's keys are ShuffleConfigKeys' (hadoop-hpc-shuffle-common, a module above this
  // one); ShuffleConfigKeysTest checks that these copies equal them.
  /** {@code ShuffleConfigKeys.PORT_KEY}. */
  public static final String HPC_SHUFFLE_PORT_KEY = "mapreduce.hpc.shuffle.port";
  /** {@code ShuffleConfigKeys.PORT_RANGE_KEY}. */
  public static final String HPC_SHUFFLE_PORT_RANGE_KEY = "mapreduce.hpc.shuffle.port.range";
  /** {@code ShuffleConfigKeys.PORT_RANGE_DEFAULT}. */
  public static final int HPC_SHUFFLE_PORT_RANGE_DEFAULT = 8;
  /** {@code ShuffleConfigKeys.BIND_HOST_KEY}. */
  public static final String HPC_SHUFFLE_BIND_HOST_KEY = "mapreduce.hpc.shuffle.bind-host";
  private static final String HPC_SHUFFLE_HANDLER = "org.hadoophpc.yarn.shuffle.HpcShuffleHandler";

  static {
    LISTENERS.put("namenode", List.of(
        new Listener("dfs.namenode.rpc-address", "dfs.namenode.rpc-bind-host"),
        new Listener("dfs.namenode.servicerpc-address", "dfs.namenode.servicerpc-bind-host"),
        new Listener("dfs.namenode.http-address", "dfs.namenode.http-bind-host")));
    LISTENERS.put("secondarynamenode", List.of(
        new Listener("dfs.namenode.secondary.http-address", null)));
    LISTENERS.put("datanode", List.of(
        new Listener("dfs.datanode.address", null),
        new Listener("dfs.datanode.http.address", null),
        new Listener("dfs.datanode.ipc.address", null)));
    LISTENERS.put("resourcemanager", List.of(
        new Listener("yarn.resourcemanager.address", "yarn.resourcemanager.bind-host"),
        new Listener("yarn.resourcemanager.scheduler.address", "yarn.resourcemanager.bind-host"),
        new Listener("yarn.resourcemanager.resource-tracker.address",
            "yarn.resourcemanager.bind-host"),
        new Listener("yarn.resourcemanager.admin.address", "yarn.resourcemanager.bind-host"),
        new Listener("yarn.resourcemanager.webapp.address", "yarn.resourcemanager.bind-host")));
    LISTENERS.put("nodemanager", List.of(
        new Listener("yarn.nodemanager.address", "yarn.nodemanager.bind-host"),
        new Listener("yarn.nodemanager.localizer.address", "yarn.nodemanager.bind-host"),
        new Listener("yarn.nodemanager.webapp.address", "yarn.nodemanager.bind-host"),
        // Stock ShuffleHandler binds the wildcard address; there is no bind-host key for it.
        new Listener("mapreduce.shuffle.port", null),
        // hadoop-hpc's HpcShuffleHandler (as mapreduce_shuffle) adds the transport listener.
        new Listener(HPC_SHUFFLE_PORT_KEY, HPC_SHUFFLE_BIND_HOST_KEY)));
    LISTENERS.put("historyserver", List.of(
        new Listener("mapreduce.jobhistory.address", "mapreduce.jobhistory.bind-host"),
        new Listener("mapreduce.jobhistory.webapp.address", "mapreduce.jobhistory.bind-host"),
        new Listener("mapreduce.jobhistory.admin.address", "mapreduce.jobhistory.bind-host")));
  }

  private DaemonCheck() {
  }

  /** Loads the same resources Hadoop's daemons and clients load, by name. */
  static Configuration loadConfiguration() {
    Configuration conf = new Configuration();
    for (String r : new String[] {"hdfs-default.xml", "hdfs-site.xml", "yarn-default.xml",
        "yarn-site.xml", "mapred-default.xml", "hpc-shuffle-default.xml", "mapred-site.xml"}) {
      if (conf.getClassLoader().getResource(r) != null) {
        conf.addResource(r);
      }
    }
    return conf;
  }

  /** Every address {@code daemon} will bind, keyed by the configuration key that sets it. */
  static Map<String, InetSocketAddress> bindAddresses(Configuration conf, String daemon) {
    List<Listener> listeners = LISTENERS.get(daemon);
    if (listeners == null) {
      throw new IllegalArgumentException("unknown daemon '" + daemon + "'; known: "
          + String.join(", ", LISTENERS.keySet()));
    }
    Map<String, InetSocketAddress> out = new LinkedHashMap<>();
    for (Listener l : listeners) {
      String value = conf.getTrimmed(l.addressKey());
      if ("dfs.namenode.rpc-address".equals(l.addressKey()) && (value == null || value.isEmpty())) {
        value = fromDefaultFs(conf);
      }
      if (value == null || value.isEmpty()) {
        continue;
      }
      String host;
      int port;
      if ("mapreduce.shuffle.port".equals(l.addressKey())
          || HPC_SHUFFLE_PORT_KEY.equals(l.addressKey())) {
        if (!conf.getTrimmedStringCollection("yarn.nodemanager.aux-services")
            .contains("mapreduce_shuffle")) {
          continue;
        }
        if (HPC_SHUFFLE_PORT_KEY.equals(l.addressKey()) && (!HPC_SHUFFLE_HANDLER.equals(
            conf.getTrimmed("yarn.nodemanager.aux-services.mapreduce_shuffle.class"))
            || conf.getInt(HPC_SHUFFLE_PORT_RANGE_KEY, HPC_SHUFFLE_PORT_RANGE_DEFAULT) > 1)) {
          continue; // not running, or any free port of a range will do
        }
        host = "0.0.0.0";
        port = Integer.parseInt(value);
      } else {
        int colon = value.lastIndexOf(':');
        if (colon < 0) {
          throw new IllegalArgumentException(l.addressKey() + "=" + value
              + " is not host:port");
        }
        host = value.substring(0, colon);
        port = Integer.parseInt(value.substring(colon + 1));
      }
      String bindHost = l.bindHostKey() == null ? null : conf.getTrimmed(l.bindHostKey());
      if (bindHost != null && !bindHost.isEmpty()) {
        host = bindHost;
      }
      if (port != 0) {
        out.put(l.addressKey(), new InetSocketAddress(host, port));
      }
    }
    return out;
  }

  private static String fromDefaultFs(Configuration conf) {
    URI fs = URI.create(conf.get("fs.defaultFS", "file:///"));
    if (!"hdfs".equals(fs.getScheme()) || fs.getHost() == null) {
      return null;
    }
    return fs.getHost() + ":" + (fs.getPort() < 0 ? 8020 : fs.getPort());
  }

  /** Returns the clashes as messages; empty when every address can be bound now. */
  public static List<String> findClashes(Configuration conf, String daemon) {
    List<String> clashes = new ArrayList<>();
    for (Map.Entry<String, InetSocketAddress> e : bindAddresses(conf, daemon).entrySet()) {
      InetSocketAddress addr = e.getValue();
      if (addr.isUnresolved()) {
        clashes.add(daemon + " cannot start: host '" + addr.getHostString() + "' of "
            + e.getKey() + " does not resolve");
        continue;
      }
      try (ServerSocket s = new ServerSocket()) {
        s.setReuseAddress(true);
        s.bind(addr);
      } catch (IOException ex) {
        clashes.add(daemon + " cannot start: port " + addr.getHostString() + ":" + addr.getPort()
            + " (" + e.getKey() + ") is already in use"
            + "; stop whatever holds it (another cluster?) or change " + e.getKey());
      }
    }
    return clashes;
  }

  static int run(String[] args, PrintStream out, PrintStream err) {
    if (args.length < 1) {
      err.println("usage: DaemonCheck get KEY... | ports DAEMON");
      return 2;
    }
    Configuration conf = loadConfiguration();
    switch (args[0]) {
      case "get":
        for (int i = 1; i < args.length; i++) {
          out.println(args[i] + "=" + conf.get(args[i], ""));
        }
        return 0;
      case "ports":
        if (args.length != 2) {
          err.println("usage: DaemonCheck ports DAEMON");
          return 2;
        }
        List<String> clashes;
        try {
          clashes = findClashes(conf, args[1]);
        } catch (IllegalArgumentException e) {
          err.println("ERROR: " + e.getMessage());
          return 2;
        }
        for (String c : clashes) {
          err.println("ERROR: " + c);
        }
        return clashes.isEmpty() ? 0 : 1;
      default:
        err.println("usage: DaemonCheck get KEY... | ports DAEMON");
        return 2;
    }
  }

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }
}
