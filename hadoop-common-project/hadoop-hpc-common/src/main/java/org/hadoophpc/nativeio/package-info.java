/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */

/**
 * Loader and slow-path probes for {@code libhpcnative.so}: {@link
 * org.hadoophpc.nativeio.HpcNative} loads the library and checks its ABI, {@link
 * org.hadoophpc.nativeio.RdmaDevices} lists verbs devices, {@link
 * org.hadoophpc.nativeio.LustreApi} finds liblustreapi, and {@link
 * org.hadoophpc.nativeio.CheckNative} prints what {@code bin/hadoop checknative} shows.
 * Nothing here throws because native code is missing; callers ask and fall back.
 */
package org.hadoophpc.nativeio;
