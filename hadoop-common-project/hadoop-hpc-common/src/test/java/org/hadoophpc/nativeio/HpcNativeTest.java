/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HpcNativeTest {

  @Test
  void loadsTheBuiltLibrary() throws NativeIoException {
    Path lib = NativeTestSupport.builtLibrary();
    assumeTrue(lib != null, "libhpcnative.so not built (a -Dnative.skip=true build?): "
        + System.getProperty(HpcNative.LIBRARY_PROPERTY));

    assertTrue(HpcNative.isAvailable(), () -> "cause: " + HpcNative.unavailabilityCause());
    assertNull(HpcNative.unavailabilityCause());
    assertEquals(lib.toString(), HpcNative.libraryPath().orElseThrow());
    assertEquals("0.1.0", HpcNative.version().orElseThrow());
    HpcNative.ensureAvailable();
  }

  /** The library loads without the transport's jar (this module's tests do not have it). */
  @Test
  void verbsNativesAreBoundOnlyToAClassWithTheLibrarysMethods() {
    NativeTestSupport.assumeNativeAvailable();
    NativeIoException e = assertThrows(NativeIoException.class,
        () -> HpcNative.bindVerbsNatives(String.class));
    assertTrue(e.getMessage().contains("java.lang.String"), e.getMessage());
    assertTrue(e.getMessage().contains("rebuild rdma-native"), e.getMessage());
  }

  @Test
  void nativeSideMatchesTheJavaAbi() {
    NativeTestSupport.assumeNativeAvailable();
    assertEquals(HpcNative.ABI_VERSION, NativeMethods.abiVersion());
    assertEquals(Arrays.toString(HpcNative.EXPECTED_LAYOUT),
        Arrays.toString(NativeMethods.abiLayout()));
  }

  @Test
  void missingExplicitPathIsUnavailableWithActionableCause() {
    HpcNative.LoadResult result = HpcNative.load("/nonexistent/hpc/libhpcnative.so");

    assertFalse(result.available);
    assertEquals("/nonexistent/hpc/libhpcnative.so", result.path);
    String message = result.cause.getMessage();
    assertTrue(message.contains("hadoop.hpc.native.lib=/nonexistent/hpc/libhpcnative.so"
        + " does not exist"), message);
    assertTrue(message.contains("java.library.path"), message);
  }

  @Test
  void relativeExplicitPathIsRefused() {
    HpcNative.LoadResult result = HpcNative.load("lib/libhpcnative.so");

    assertFalse(result.available);
    assertTrue(result.cause.getMessage().contains("is not an absolute path"),
        result.cause.getMessage());
  }

  @Test
  void fileThatIsNotALibraryIsUnavailableNotThrown(@TempDir Path dir) throws IOException {
    // A real ELF library (the JVM's own libjava.so) relabelled for another machine (e_machine
    // = EM_S390): dlopen rejects it before mapping anything. Arbitrary bytes would also be
    // rejected, but make HotSpot print its executable-stack warning; a truncated ELF makes
    // ld.so fault (SIGBUS) while mapping past the end of the file.
    Path real = Paths.get(System.getProperty("java.home"), "lib", "libjava.so");
    assumeTrue(Files.isRegularFile(real), real + " not found");
    byte[] elf = Files.readAllBytes(real);
    elf[18] = 22; // e_machine, little-endian u16 at offset 18
    elf[19] = 0;
    Path bogus = Files.write(dir.resolve("libhpcnative.so"), elf);

    HpcNative.LoadResult result = HpcNative.load(bogus.toString());

    assertFalse(result.available);
    String message = result.cause.getMessage();
    assertTrue(message.startsWith("could not load " + bogus), message);
    assertTrue(message.contains("rebuild it"), message);
    assertTrue(result.cause.getCause() instanceof UnsatisfiedLinkError);
  }

  @Test
  void ensureAvailableCarriesTheCause() {
    HpcNative.LoadResult result = HpcNative.load("/nonexistent/libhpcnative.so");

    NativeIoException e = assertThrows(NativeIoException.class, result::ensureAvailable);
    assertSame(result.cause, e.getCause());
    assertTrue(e.getMessage().startsWith("load libhpcnative.so failed: "), e.getMessage());
  }

  @Test
  void missingLibibverbsSaysWhatToInstall() {
    UnsatisfiedLinkError jvm = new UnsatisfiedLinkError("/opt/hpc/lib/native/libhpcnative.so: "
        + "libibverbs.so.1: cannot open shared object file: No such file or directory");

    UnsatisfiedLinkError explained = HpcNative.explain(jvm, null, "/opt/hpc/lib/native");

    assertTrue(explained.getMessage().contains("libibverbs.so.1: cannot open shared object"),
        explained.getMessage());
    assertTrue(explained.getMessage().contains("install rdma-core's libibverbs1 and librdmacm1"),
        explained.getMessage());
    assertSame(jvm, explained.getCause());
  }

  @Test
  void libraryNotOnLibraryPathNamesThePathAndTheProperty() {
    UnsatisfiedLinkError jvm =
        new UnsatisfiedLinkError("no hpcnative in java.library.path: /usr/lib:/opt/lib");

    String message = HpcNative.explain(jvm, null, "/usr/lib:/opt/lib").getMessage();

    assertTrue(message.startsWith(
        "libhpcnative.so not found on java.library.path=[/usr/lib:/opt/lib]"), message);
    assertTrue(message.contains("lib/native"), message);
    assertTrue(message.contains("-Dhadoop.hpc.native.lib="), message);
  }

  @Test
  void abiVersionMismatchNamesBothVersions() {
    int other = HpcNative.ABI_VERSION + 1;
    Throwable cause = HpcNative.checkAbi(other, HpcNative.EXPECTED_LAYOUT, "0.2.0", "/x/lib.so");

    String message = cause.getMessage();
    assertTrue(message.contains("libhpcnative 0.2.0 with abi " + other), message);
    assertTrue(message.contains("expects abi " + HpcNative.ABI_VERSION), message);
  }

  @Test
  void layoutMismatchNamesBothLayouts() {
    Throwable cause = HpcNative.checkAbi(HpcNative.ABI_VERSION, new int[] {168, 0}, "0.1.0",
        "/x/lib.so");

    String message = cause.getMessage();
    assertTrue(message.contains("[168, 0]"), message);
    assertTrue(message.contains("[176, 0, 8"), message);
  }

  @Test
  void matchingAbiIsAccepted() {
    assertNull(HpcNative.checkAbi(HpcNative.ABI_VERSION, HpcNative.EXPECTED_LAYOUT.clone(),
        "0.1.0", "/x/lib.so"));
  }
}
