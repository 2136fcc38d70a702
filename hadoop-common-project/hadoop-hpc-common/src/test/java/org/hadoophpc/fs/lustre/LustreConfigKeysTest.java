/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.fs.lustre;

import org.hadoophpc.conf.ConfigKeysTestBase;

/** {@link LustreConfigKeys} and hpc-lustre-default.xml agree. */
class LustreConfigKeysTest extends ConfigKeysTestBase {
  LustreConfigKeysTest() {
    super("hpc-lustre-default.xml", LustreConfigKeys.class);
  }
}
