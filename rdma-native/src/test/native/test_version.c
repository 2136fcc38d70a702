/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Version and ABI layout handshake. The expected layout is spelled out by hand here because
 * Java (HpcNative.EXPECTED_LAYOUT) spells it out the same way; a change to hpcn_port_t,
 * hpcn_wc_t or hpcn_cm_event_t must fail this test until both sides and HPCN_ABI_VERSION move
 * together.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <string.h>

static int abi_version_is_five(void)
{
    HPCN_CHECK(hpcn_abi_version() == 5);
    HPCN_CHECK(HPCN_ABI_VERSION == 5);
    return 0;
}

static int version_string_is_set(void)
{
    HPCN_CHECK(hpcn_version() != NULL);
    HPCN_CHECK(strcmp(hpcn_version(), "0.1.0") == 0);
    return 0;
}

static int layout_matches_java_expectation(void)
{
    static const int32_t expected[HPCN_ABI_LAYOUT_LEN] = {
        176, 0, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 112,
        40, 0, 8, 12, 16, 20, 24, 28, 32,
        96, 0, 8, 16, 20, 24, 28, 30, 32,
    };
    int32_t layout[HPCN_ABI_LAYOUT_LEN + 2];
    size_t count = 0;
    size_t i;

    HPCN_CHECK(hpcn_abi_layout(HPCN_ABI_LAYOUT_LEN + 2, layout, &count) == 0);
    HPCN_CHECK(count == HPCN_ABI_LAYOUT_LEN);
    for (i = 0; i < count; i++) {
        if (layout[i] != expected[i])
            fprintf(stderr, "layout[%zu] = %d, expected %d\n", i, layout[i], expected[i]);
        HPCN_CHECK(layout[i] == expected[i]);
    }
    return 0;
}

static int layout_rejects_small_buffer_without_writing(void)
{
    int32_t layout[2] = { -7, -7 };
    size_t count = 99;

    HPCN_CHECK(hpcn_abi_layout(2, layout, &count) == -ENOSPC);
    HPCN_CHECK(count == 99);
    HPCN_CHECK(layout[0] == -7 && layout[1] == -7);
    HPCN_CHECK(hpcn_abi_layout(HPCN_ABI_LAYOUT_LEN, NULL, &count) == -EINVAL);
    HPCN_CHECK(hpcn_abi_layout(HPCN_ABI_LAYOUT_LEN, layout, NULL) == -EINVAL);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(abi_version_is_five);
    failures += HPCN_RUN(version_string_is_set);
    failures += HPCN_RUN(layout_matches_java_expectation);
    failures += HPCN_RUN(layout_rejects_small_buffer_without_writing);
    return failures == 0 ? 0 : 1;
}
