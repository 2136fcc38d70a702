/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.tools.kdc;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Stream;
import org.apache.kerby.kerberos.kerb.KrbException;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;

/**
 * The KDC of one job's cluster: a realm of its own, on Apache Kerby's in-memory
 * SimpleKdcServer, bound to the master's address on a TCP port picked at start. It creates the
 * principals it is told to with random keys, exports them into keytabs in a private directory
 * (ours, mode 700; files 600), writes a krb5.conf every node can use (kdc = host:port, TCP only)
 * and then serves until it is sent TERM. Its keys live only in this process: a restart makes new
 * keytabs. Started by sbin/hpc-cluster.sh (libexec/hpc-security.sh), which waits for the file
 * {@value #READY_FILE} (written last) before it starts Hadoop's daemons.
 *
 * <pre>
 * JobKdc --realm REALM --bind HOST --dir DIR [--keytab FILE=PRINCIPAL[,PRINCIPAL...]]...
 * </pre>
 *
 * <p>Not thread-safe: main builds it; the shutdown hook stops it.
 */
public final class JobKdc {
  /** Written last into the private directory: "host:port" of the running KDC. */
  public static final String READY_FILE = "kdc.addr";
  /** The krb5.conf written for every JVM of the cluster. */
  public static final String KRB5_CONF = "krb5.conf";
  /** Tries at a port another process takes between our probe and the KDC's bind. */
  private static final int BIND_ATTEMPTS = 5;

  private final String realm;
  private final String bindHost;
  private final PrivateDir dir;
  private final Map<String, List<String>> keytabs;
  private SimpleKdcServer kdc;
  private Path workDir;
  private int port;

  JobKdc(String realm, String bindHost, PrivateDir dir, Map<String, List<String>> keytabs) {
    this.realm = realm;
    this.bindHost = bindHost;
    this.dir = dir;
    this.keytabs = keytabs;
  }

  /** Binds, creates the principals and writes krb5.conf, the keytabs and the ready file. */
  void start() throws IOException {
    workDir = Files.createDirectory(dir.resolve(".kdc-" + ProcessHandle.current().pid()),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    KrbException last = null;
    for (int attempt = 0; attempt < BIND_ATTEMPTS && kdc == null; attempt++) {
      int candidate = freePort();
      SimpleKdcServer server = null;
      try {
        server = new SimpleKdcServer();
        server.setWorkDir(workDir.toFile());
        server.setKdcHost(bindHost);
        server.setKdcRealm(realm);
        server.setAllowUdp(false);
        server.setAllowTcp(true);
        server.setKdcTcpPort(candidate);
        server.init();
        server.start();
        kdc = server;
        port = candidate;
      } catch (KrbException e) {
        last = e;
        stopQuietly(server);
      }
    }
    if (kdc == null) {
      throw new IOException("kdc not started on " + bindHost + " after " + BIND_ATTEMPTS + " ports", last);
    }
    try {
      for (Map.Entry<String, List<String>> e : keytabs.entrySet()) {
        List<String> names = new ArrayList<>();
        for (String p : e.getValue()) {
          String name = p + "@" + realm;
          kdc.createPrincipal(name);
          names.add(name);
        }
        Path temp = dir.tempName(e.getKey());
        kdc.getKadmin().exportKeytab(temp.toFile(), names);
        dir.publish(temp, e.getKey());
      }
    } catch (KrbException e) {
      throw new IOException("kdc: cannot create or export principals: " + e.getMessage(), e);
    }
    dir.write(KRB5_CONF, krb5Conf());
    dir.write(READY_FILE, bindHost + ":" + port + "\n");
  }

  int port() {
    return port;
  }

  /** The krb5.conf of the realm: this KDC only, TCP only, no DNS look-ups for realm or KDC. */
  String krb5Conf() {
    return "# written by org.hadoophpc.tools.kdc.JobKdc: the job's own realm\n"
        + "[libdefaults]\n"
        + "  default_realm = " + realm + "\n"
        + "  dns_lookup_realm = false\n"
        + "  dns_lookup_kdc = false\n"
        // Kerby serves TCP only here: never try UDP first.
        + "  udp_preference_limit = 1\n"
        + "  forwardable = true\n"
        + "\n[realms]\n"
        + "  " + realm + " = {\n"
        + "    kdc = " + bindHost + ":" + port + "\n"
        + "  }\n";
  }

  /** Stops the KDC and removes its working directory; the keytabs stay (they are useless now). */
  void stop() {
    stopQuietly(kdc);
    kdc = null;
    try {
      Files.deleteIfExists(dir.resolve(READY_FILE));
      if (workDir != null && Files.isDirectory(workDir)) {
        try (Stream<Path> s = Files.walk(workDir)) {
          for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
            Files.deleteIfExists(p);
          }
        }
      }
    } catch (IOException e) {
      System.err.println("kdc: cannot clean " + workDir + ": " + e);
    }
  }

  private static void stopQuietly(SimpleKdcServer server) {
    if (server == null) {
      return;
    }
    try {
      server.stop();
    } catch (KrbException e) {
      System.err.println("kdc: stop failed: " + e);
    }
  }

  private int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket()) {
      s.bind(new InetSocketAddress(InetAddress.getByName(bindHost), 0));
      return s.getLocalPort();
    }
  }

  /** Parses "--keytab FILE=P1,P2": FILE is a plain name inside the private directory. */
  static void addKeytab(Map<String, List<String>> keytabs, String spec) {
    int eq = spec.indexOf('=');
    String file = eq > 0 ? spec.substring(0, eq) : "";
    if (file.isEmpty() || file.contains("/") || file.startsWith(".") || eq == spec.length() - 1) {
      throw new IllegalArgumentException("--keytab " + spec + ": give FILE=PRINCIPAL[,PRINCIPAL...] with a plain file name");
    }
    List<String> list = keytabs.computeIfAbsent(file, k -> new ArrayList<>());
    for (String p : spec.substring(eq + 1).split(",")) {
      if (p.isEmpty() || p.contains("@")) {
        throw new IllegalArgumentException("--keytab " + spec + ": principal '" + p + "' (give it without @REALM)");
      }
      list.add(p);
    }
  }

  public static void main(String[] args) throws IOException {
    JobKdc job;
    try {
      job = fromArgs(args);
    } catch (IllegalArgumentException e) {
      System.err.println("ERROR: " + e.getMessage());
      System.err.println(USAGE);
      System.exit(1);
      return;
    } catch (PrivateDir.NotPrivateException e) {
      System.err.println("ERROR: " + e.getMessage());
      System.exit(2);
      return;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      job.stop();
      stopped.countDown();
    }, "kdc-stop"));
    try {
      job.start();
    } catch (IOException e) {
      job.stop();
      throw e;
    }
    System.out.println("kdc: realm " + job.realm + " at " + job.bindHost + ":" + job.port() + "; "
        + job.keytabs.size() + " keytab(s) and " + KRB5_CONF + " in " + job.dir.path());
    System.out.flush();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static final String USAGE =
      "usage: JobKdc --realm REALM --bind HOST --dir DIR [--keytab FILE=PRINCIPAL[,PRINCIPAL...]]...";

  /**
   * The KDC the command line describes, not started yet.
   *
   * @throws IllegalArgumentException a malformed command line
   * @throws PrivateDir.NotPrivateException DIR is not this user's, mode 700
   */
  static JobKdc fromArgs(String[] args) throws PrivateDir.NotPrivateException {
    String realm = null;
    String bind = null;
    String dirName = null;
    Map<String, List<String>> keytabs = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(args[i] + " needs a value");
      }
      switch (args[i]) {
        case "--realm" -> realm = args[i + 1];
        case "--bind" -> bind = args[i + 1];
        case "--dir" -> dirName = args[i + 1];
        case "--keytab" -> addKeytab(keytabs, args[i + 1]);
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    if (realm == null || bind == null || dirName == null) {
      throw new IllegalArgumentException("give --realm, --bind and --dir");
    }
    if (!realm.equals(realm.toUpperCase(Locale.ROOT)) || !realm.matches("[A-Z0-9][A-Z0-9.-]*")) {
      throw new IllegalArgumentException("--realm " + realm + ": upper-case letters, digits, '.', '-'");
    }
    return new JobKdc(realm, bind, PrivateDir.check(Paths.get(dirName)), keytabs);
  }
}
