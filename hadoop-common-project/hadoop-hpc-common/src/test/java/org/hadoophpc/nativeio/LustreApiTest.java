/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 */
package org.hadoophpc.nativeio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

class LustreApiTest {
  private static final String MISSING = "liblustreapi_hpcn_test_missing.so.1";

  private static String complete() {
    NativeTestSupport.assumeNativeAvailable();
    return NativeTestSupport.testLibrary("liblustreapi_double.so").toString();
  }

  private static String incomplete() {
    NativeTestSupport.assumeNativeAvailable();
    return NativeTestSupport.testLibrary("liblustreapi_double_incomplete.so").toString();
  }

  @Test
  void completeDoubleIsAvailable() {
    String library = complete();

    LustreApi lustre = LustreApi.probe(List.of(library));

    assertTrue(lustre.isAvailable(), lustre::reason);
    assertEquals(library, lustre.library());
    assertTrue(lustre.missingSymbols().isEmpty());
    assertNull(lustre.reason());
  }

  @Test
  void incompleteDoubleNamesTheMissingSymbol() {
    String library = incomplete();

    LustreApi lustre = LustreApi.probe(List.of(library));

    assertFalse(lustre.isAvailable());
    assertEquals(List.of("llapi_layout_ost_index_get"), lustre.missingSymbols());
    assertTrue(lustre.reason().startsWith("liblustreapi at " + library
        + " lacks llapi_layout_ost_index_get"), lustre.reason());
  }

  @Test
  void missingLibraryIsNotFoundWithTheDlerrorText() {
    NativeTestSupport.assumeNativeAvailable();

    LustreApi lustre = LustreApi.probe(List.of(MISSING));

    assertFalse(lustre.isAvailable());
    assertTrue(lustre.reason().startsWith("liblustreapi not found (dlopen " + MISSING + ": "),
        lustre.reason());
    assertTrue(lustre.reason().endsWith(": Lustre layout features use plain POSIX behaviour"),
        lustre.reason());
  }

  @Test
  void firstCompleteCandidateWins() {
    String complete = complete();

    LustreApi lustre = LustreApi.probe(List.of(MISSING, incomplete(), complete));

    assertTrue(lustre.isAvailable(), lustre::reason);
    assertEquals(complete, lustre.library());
  }

  @Test
  void incompleteLibraryIsReportedOverMissingOnes() {
    LustreApi lustre = LustreApi.probe(List.of(MISSING, incomplete()));

    assertEquals(List.of("llapi_layout_ost_index_get"), lustre.missingSymbols());
  }

  @Test
  void candidatesComeFromPropertyThenEnvironmentThenDefaults() {
    assertEquals(List.of("/a/liblustreapi.so", "b.so"),
        LustreApi.candidates(" /a/liblustreapi.so , b.so,", "env.so"));
    assertEquals(List.of("env.so"), LustreApi.candidates(null, "env.so"));
    assertEquals(List.of("env.so"), LustreApi.candidates(" ", "env.so"));
    assertEquals(LustreApi.DEFAULT_CANDIDATES, LustreApi.candidates(null, null));
    assertEquals(List.of("liblustreapi.so.1", "liblustreapi.so"), LustreApi.DEFAULT_CANDIDATES);
  }
}
