/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * A stand-in for liblustreapi with the same C ABI for the five llapi_layout_* calls the
 * layout API uses. Built twice: liblustreapi_double.so (complete) and, with
 * HPCN_DOUBLE_WITHOUT_OST_INDEX, liblustreapi_double_incomplete.so (lacks
 * llapi_layout_ost_index_get) so the probe's "missing symbol" report can be tested.
 * It describes every path as a 4-stripe, 1 MiB-stripe file on OSTs 0..3.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define DOUBLE_EXPORT __attribute__((visibility("default")))

struct llapi_layout {
    uint64_t stripe_count;
    uint64_t stripe_size;
};

DOUBLE_EXPORT struct llapi_layout *llapi_layout_get_by_path(const char *path, uint32_t flags);
DOUBLE_EXPORT void llapi_layout_free(struct llapi_layout *layout);
DOUBLE_EXPORT int llapi_layout_stripe_count_get(const struct llapi_layout *layout,
                                                uint64_t *count);
DOUBLE_EXPORT int llapi_layout_stripe_size_get(const struct llapi_layout *layout,
                                               uint64_t *size);
#ifndef HPCN_DOUBLE_WITHOUT_OST_INDEX
DOUBLE_EXPORT int llapi_layout_ost_index_get(const struct llapi_layout *layout,
                                             int stripe_number, uint64_t *index);
#endif

struct llapi_layout *llapi_layout_get_by_path(const char *path, uint32_t flags)
{
    struct llapi_layout *layout;

    (void)flags;
    if (path == NULL) {
        errno = EINVAL;
        return NULL;
    }
    layout = malloc(sizeof(*layout));
    if (layout == NULL)
        return NULL;
    layout->stripe_count = 4;
    layout->stripe_size = 1u << 20;
    return layout;
}

void llapi_layout_free(struct llapi_layout *layout)
{
    free(layout);
}

int llapi_layout_stripe_count_get(const struct llapi_layout *layout, uint64_t *count)
{
    if (layout == NULL || count == NULL) {
        errno = EINVAL;
        return -1;
    }
    *count = layout->stripe_count;
    return 0;
}

int llapi_layout_stripe_size_get(const struct llapi_layout *layout, uint64_t *size)
{
    if (layout == NULL || size == NULL) {
        errno = EINVAL;
        return -1;
    }
    *size = layout->stripe_size;
    return 0;
}

#ifndef HPCN_DOUBLE_WITHOUT_OST_INDEX
int llapi_layout_ost_index_get(const struct llapi_layout *layout, int stripe_number,
                               uint64_t *index)
{
    if (layout == NULL || index == NULL || stripe_number < 0 ||
        (uint64_t)stripe_number >= layout->stripe_count) {
        errno = EINVAL;
        return -1;
    }
    *index = (uint64_t)stripe_number;
    return 0;
}
#endif
