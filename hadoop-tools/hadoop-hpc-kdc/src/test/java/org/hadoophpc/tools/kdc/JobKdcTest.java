/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.tools.kdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.keytab.Keytab;
import org.apache.kerby.kerberos.kerb.type.base.PrincipalName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The job KDC as the cluster script uses it: a private directory in, keytabs that log in out. */
class JobKdcTest {
  private static final String REALM = "HPC-TEST";

  @TempDir
  Path tmp;

  private static String[] args(Path dir, String... keytabs) {
    String[] args = new String[6 + keytabs.length * 2];
    args[0] = "--realm";
    args[1] = REALM;
    args[2] = "--bind";
    args[3] = "127.0.0.1";
    args[4] = "--dir";
    args[5] = dir.toString();
    for (int i = 0; i < keytabs.length; i++) {
      args[6 + 2 * i] = "--keytab";
      args[7 + 2 * i] = keytabs[i];
    }
    return args;
  }

  @Test
  void refusesAMalformedCommandLine() {
    assertThrows(IllegalArgumentException.class, () -> JobKdc.fromArgs(new String[] {"--realm", "lower"}));
    assertThrows(IllegalArgumentException.class, () -> JobKdc.addKeytab(new LinkedHashMap<>(), "../x=alice"));
    assertThrows(IllegalArgumentException.class, () -> JobKdc.addKeytab(new LinkedHashMap<>(), "u.keytab=alice@OTHER"));
  }

  @Test
  void refusesADirectoryOtherUsersCanRead() throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("open"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    PrivateDir.NotPrivateException e = assertThrows(PrivateDir.NotPrivateException.class,
        () -> JobKdc.fromArgs(args(dir, "user.keytab=alice")));
    assertTrue(e.getMessage().contains("must be 700"), e.getMessage());
    assertFalse(Files.exists(dir.resolve("user.keytab")));
    assertFalse(Files.exists(dir.resolve(JobKdc.KRB5_CONF)));
  }

  @Test
  void keytabsArePrivateHoldOnlyTheirPrincipalsAndLogIn() throws Exception {
    Path dir = Files.createDirectory(tmp.resolve("sec"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    JobKdc kdc = JobKdc.fromArgs(args(dir, "service.keytab=nn/localhost,HTTP/localhost", "user.keytab=alice"));
    kdc.start();
    try {
      for (String f : List.of("service.keytab", "user.keytab", JobKdc.KRB5_CONF, JobKdc.READY_FILE)) {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve(f))), f);
      }
      Keytab user = Keytab.loadKeytab(dir.resolve("user.keytab").toFile());
      assertEquals(List.of("alice@" + REALM),
          user.getPrincipals().stream().map(PrincipalName::getName).distinct().collect(Collectors.toList()),
          "the user's keytab holds the user's keys only (never krbtgt's)");
      assertTrue(Files.readString(dir.resolve(JobKdc.KRB5_CONF)).contains("kdc = 127.0.0.1:" + kdc.port()));

      KrbClient client = new KrbClient(dir.toFile());
      client.init();
      assertNotNull(client.requestTgt("alice@" + REALM, dir.resolve("user.keytab").toFile()));
      assertNotNull(client.requestTgt("nn/localhost@" + REALM, dir.resolve("service.keytab").toFile()));
    } finally {
      kdc.stop();
    }
    assertFalse(Files.exists(dir.resolve(JobKdc.READY_FILE)), "a stopped KDC leaves no ready file");
  }
}
