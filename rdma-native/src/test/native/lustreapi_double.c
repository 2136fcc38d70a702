/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * A stand-in for liblustreapi with the same C ABI for the nine llapi_layout_* calls
 * libhpcnative uses, so the real JNI and Java code runs in tests on a machine without Lustre.
 * Built twice: liblustreapi_double.so (complete) and, with HPCN_DOUBLE_WITHOUT_OST_INDEX,
 * liblustreapi_double_incomplete.so (lacks llapi_layout_ost_index_get) so the probe's
 * "missing symbol" report can be tested.
 *
 * The "file system": a directory holding a file named .lustre-double is the root of a
 * stand-in mount, and every path below it is "on Lustre". The marker's text may set
 *   osts=N stripe_size=BYTES stripe_count=N        (defaults: 4, 1048576, 1)
 * Paths outside any such directory fail with ENOTTY, as ioctls on a non-Lustre file do.
 * A file made by llapi_layout_file_create keeps its layout in the xattr user.lustre_double.lov
 * ("stripe_size stripe_count first_ost"), so it follows renames and hard links like a real
 * layout; other files get the marker's defaults, starting at OST (inode % osts). Stripe k
 * lives on OST (first_ost + k) % osts. Directories have a layout but no OSTs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define DOUBLE_EXPORT __attribute__((visibility("default")))
#define MARKER ".lustre-double"
#define XATTR "user.lustre_double.lov"
#define STRIPE_ALIGN 65536u

struct llapi_layout {
    uint64_t stripe_size;  /* 0 in an allocated layout: the mount's default */
    uint64_t stripe_count; /* likewise */
    uint64_t first_ost;
    uint64_t osts; /* the mount's OST count; 0: no objects (a directory, an allocated layout) */
};

struct mount_defaults {
    uint64_t osts;
    uint64_t stripe_size;
    uint64_t stripe_count;
};

DOUBLE_EXPORT struct llapi_layout *llapi_layout_get_by_path(const char *path, uint32_t flags);
DOUBLE_EXPORT void llapi_layout_free(struct llapi_layout *layout);
DOUBLE_EXPORT int llapi_layout_stripe_count_get(const struct llapi_layout *layout,
                                                uint64_t *count);
DOUBLE_EXPORT int llapi_layout_stripe_size_get(const struct llapi_layout *layout,
                                               uint64_t *size);
#ifndef HPCN_DOUBLE_WITHOUT_OST_INDEX
DOUBLE_EXPORT int llapi_layout_ost_index_get(const struct llapi_layout *layout,
                                             uint64_t stripe_number, uint64_t *index);
#endif
DOUBLE_EXPORT struct llapi_layout *llapi_layout_alloc(void);
DOUBLE_EXPORT int llapi_layout_stripe_count_set(struct llapi_layout *layout, uint64_t count);
DOUBLE_EXPORT int llapi_layout_stripe_size_set(struct llapi_layout *layout, uint64_t size);
DOUBLE_EXPORT int llapi_layout_file_create(const char *path, int open_flags, int mode,
                                           const struct llapi_layout *layout);

/* Reads the marker of the stand-in mount dir belongs to; -1 + ENOTTY when there is none. */
static int mount_of(const char *dir, struct mount_defaults *out)
{
    char at[PATH_MAX];
    char marker[PATH_MAX + sizeof(MARKER) + 1];

    if (realpath(dir, at) == NULL)
        return -1;
    for (;;) {
        FILE *f;

        snprintf(marker, sizeof(marker), "%s/%s", strcmp(at, "/") == 0 ? "" : at, MARKER);
        f = fopen(marker, "r");
        if (f != NULL) {
            char key[32];
            unsigned long long value;

            out->osts = 4;
            out->stripe_size = 1u << 20;
            out->stripe_count = 1;
            while (fscanf(f, " %31[a-z_]=%llu", key, &value) == 2) {
                if (strcmp(key, "osts") == 0 && value > 0)
                    out->osts = value;
                else if (strcmp(key, "stripe_size") == 0 && value > 0)
                    out->stripe_size = value;
                else if (strcmp(key, "stripe_count") == 0 && value > 0)
                    out->stripe_count = value;
            }
            fclose(f);
            if (out->stripe_count > out->osts)
                out->stripe_count = out->osts;
            return 0;
        }
        if (strcmp(at, "/") == 0) {
            errno = ENOTTY;
            return -1;
        }
        *strrchr(at, '/') = '\0';
        if (at[0] == '\0')
            strcpy(at, "/");
    }
}

static int parent_of(const char *path, char *out, size_t len)
{
    const char *slash = strrchr(path, '/');

    if (slash == NULL)
        return snprintf(out, len, ".") < (int)len ? 0 : -1;
    if (slash == path)
        return snprintf(out, len, "/") < (int)len ? 0 : -1;
    if ((size_t)(slash - path) >= len)
        return -1;
    memcpy(out, path, (size_t)(slash - path));
    out[slash - path] = '\0';
    return 0;
}

struct llapi_layout *llapi_layout_get_by_path(const char *path, uint32_t flags)
{
    struct mount_defaults mount;
    struct llapi_layout *layout;
    struct stat st;
    char dir[PATH_MAX];
    char text[128];
    unsigned long long size, count, first;
    ssize_t n;

    (void)flags;
    if (path == NULL) {
        errno = EINVAL;
        return NULL;
    }
    if (stat(path, &st) != 0)
        return NULL;
    if (!S_ISDIR(st.st_mode) && parent_of(path, dir, sizeof(dir)) != 0) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    if (mount_of(S_ISDIR(st.st_mode) ? path : dir, &mount) != 0)
        return NULL;

    layout = calloc(1, sizeof(*layout));
    if (layout == NULL)
        return NULL;
    layout->stripe_size = mount.stripe_size;
    layout->stripe_count = mount.stripe_count;
    if (S_ISDIR(st.st_mode))
        return layout; /* a default layout: no OSTs */
    layout->osts = mount.osts;
    layout->first_ost = (uint64_t)st.st_ino % mount.osts;
    n = getxattr(path, XATTR, text, sizeof(text) - 1);
    if (n > 0) {
        text[n] = '\0';
        if (sscanf(text, "%llu %llu %llu", &size, &count, &first) == 3) {
            layout->stripe_size = size;
            layout->stripe_count = count;
            layout->first_ost = first % mount.osts;
        }
    }
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
int llapi_layout_ost_index_get(const struct llapi_layout *layout, uint64_t stripe_number,
                               uint64_t *index)
{
    if (layout == NULL || index == NULL || stripe_number >= layout->stripe_count) {
        errno = EINVAL;
        return -1;
    }
    if (layout->osts == 0) {
        errno = ENODATA; /* a directory, or a layout not read from a file */
        return -1;
    }
    *index = (layout->first_ost + stripe_number) % layout->osts;
    return 0;
}
#endif

struct llapi_layout *llapi_layout_alloc(void)
{
    return calloc(1, sizeof(struct llapi_layout));
}

int llapi_layout_stripe_count_set(struct llapi_layout *layout, uint64_t count)
{
    if (layout == NULL || count == 0 || count > 2000) {
        errno = EINVAL;
        return -1;
    }
    layout->stripe_count = count;
    return 0;
}

int llapi_layout_stripe_size_set(struct llapi_layout *layout, uint64_t size)
{
    if (layout == NULL || size == 0 || size % STRIPE_ALIGN != 0) {
        errno = EINVAL;
        return -1;
    }
    layout->stripe_size = size;
    return 0;
}

int llapi_layout_file_create(const char *path, int open_flags, int mode,
                             const struct llapi_layout *layout)
{
    struct mount_defaults mount;
    struct stat st;
    char dir[PATH_MAX];
    char text[128];
    uint64_t size, count;
    int fd;

    if (path == NULL || layout == NULL) {
        errno = EINVAL;
        return -1;
    }
    if (parent_of(path, dir, sizeof(dir)) != 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (mount_of(dir, &mount) != 0)
        return -1;
    size = layout->stripe_size != 0 ? layout->stripe_size : mount.stripe_size;
    count = layout->stripe_count != 0 ? layout->stripe_count : mount.stripe_count;
    if (count > mount.osts)
        count = mount.osts; /* as Lustre does: no more stripes than OSTs */

    fd = open(path, open_flags | O_CREAT | O_EXCL, (mode_t)mode);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0)
        goto fail;
    snprintf(text, sizeof(text), "%llu %llu %llu", (unsigned long long)size,
             (unsigned long long)count, (unsigned long long)(st.st_ino % mount.osts));
    if (fsetxattr(fd, XATTR, text, strlen(text), 0) != 0)
        goto fail;
    return fd;

fail: {
        int err = errno;

        close(fd);
        unlink(path);
        errno = err;
        return -1;
    }
}
