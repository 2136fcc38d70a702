/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * liblustreapi probe against a missing library and against the two test doubles built by
 * this tree (paths come from CMake as HPCN_TEST_DOUBLE and HPCN_TEST_DOUBLE_INCOMPLETE).
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <string.h>

#define MISSING_LIBRARY "liblustreapi_hpcn_test_missing.so.1"

static int missing_library_is_not_found_with_dlerror_text(void)
{
    hpcn_lustre_probe_t probe;

    HPCN_CHECK(hpcn_lustre_probe(MISSING_LIBRARY, &probe) == 0);
    HPCN_CHECK(probe.status == HPCN_LUSTRE_NOT_FOUND);
    HPCN_CHECK(strstr(probe.detail, MISSING_LIBRARY) != NULL);
    HPCN_CHECK(!hpcn_lustre_is_loaded());
    return 0;
}

static int complete_double_is_available_and_kept(void)
{
    hpcn_lustre_probe_t probe;

    HPCN_CHECK(hpcn_lustre_probe(HPCN_TEST_DOUBLE, &probe) == 0);
    HPCN_CHECK(probe.status == HPCN_LUSTRE_AVAILABLE);
    HPCN_CHECK(probe.missing == 0);
    HPCN_CHECK(probe.detail[0] == '\0');
    HPCN_CHECK(hpcn_lustre_is_loaded());

    /* A second complete probe closes its own handle and leaves the slot as it was. */
    HPCN_CHECK(hpcn_lustre_probe(HPCN_TEST_DOUBLE, &probe) == 0);
    HPCN_CHECK(probe.status == HPCN_LUSTRE_AVAILABLE);
    HPCN_CHECK(hpcn_lustre_is_loaded());

    hpcn_lustre_unload();
    HPCN_CHECK(!hpcn_lustre_is_loaded());
    hpcn_lustre_unload(); /* idempotent */
    return 0;
}

static int incomplete_double_names_the_missing_symbol(void)
{
    hpcn_lustre_probe_t probe;
    unsigned i;

    HPCN_CHECK(hpcn_lustre_probe(HPCN_TEST_DOUBLE_INCOMPLETE, &probe) == 0);
    HPCN_CHECK(probe.status == HPCN_LUSTRE_INCOMPLETE);
    for (i = 0; i < HPCN_LUSTRE_SYMBOL_COUNT; i++) {
        int missing = (probe.missing & (1u << i)) != 0;
        int is_ost = strcmp(hpcn_lustre_symbol_name(i), "llapi_layout_ost_index_get") == 0;

        HPCN_CHECK(missing == is_ost);
    }
    HPCN_CHECK(strstr(probe.detail, "llapi_layout_ost_index_get") != NULL);
    HPCN_CHECK(!hpcn_lustre_is_loaded());
    return 0;
}

static int bad_arguments_leave_the_result_untouched(void)
{
    hpcn_lustre_probe_t probe;

    memset(&probe, 0x5a, sizeof(probe));
    HPCN_CHECK(hpcn_lustre_probe(NULL, &probe) == -EINVAL);
    HPCN_CHECK(hpcn_lustre_probe("", &probe) == -EINVAL);
    HPCN_CHECK(hpcn_lustre_probe(HPCN_TEST_DOUBLE, NULL) == -EINVAL);
    HPCN_CHECK(probe.missing == 0x5a5a5a5au);
    HPCN_CHECK(hpcn_lustre_symbol_name(HPCN_LUSTRE_SYMBOL_COUNT) == NULL);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(missing_library_is_not_found_with_dlerror_text);
    failures += HPCN_RUN(complete_double_is_available_and_kept);
    failures += HPCN_RUN(incomplete_double_names_the_missing_symbol);
    failures += HPCN_RUN(bad_arguments_leave_the_result_untouched);
    hpcn_lustre_unload();
    return failures == 0 ? 0 : 1;
}
