/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * liblustreapi is reached only through dlopen: most nodes that run this library have no
 * Lustre client installed, and a hard link-time dependency would stop libhpcnative.so from
 * loading there at all (STYLE.md, "The native boundary", rule 7).
 */
#include "hpcn.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Mirrors liblustreapi's C ABI; the struct stays opaque, the flags enum is 32 bits wide. */
struct llapi_layout;

typedef struct llapi_layout *(*hpcn_llapi_layout_get_by_path_fn)(const char *path,
                                                                 uint32_t flags);
typedef void (*hpcn_llapi_layout_free_fn)(struct llapi_layout *layout);
typedef int (*hpcn_llapi_layout_stripe_count_get_fn)(const struct llapi_layout *layout,
                                                     uint64_t *count);
typedef int (*hpcn_llapi_layout_stripe_size_get_fn)(const struct llapi_layout *layout,
                                                    uint64_t *size);
typedef int (*hpcn_llapi_layout_ost_index_get_fn)(const struct llapi_layout *layout,
                                                  uint64_t stripe_number, uint64_t *index);
typedef struct llapi_layout *(*hpcn_llapi_layout_alloc_fn)(void);
typedef int (*hpcn_llapi_layout_stripe_count_set_fn)(struct llapi_layout *layout,
                                                     uint64_t count);
typedef int (*hpcn_llapi_layout_stripe_size_set_fn)(struct llapi_layout *layout,
                                                    uint64_t size);
typedef int (*hpcn_llapi_layout_file_create_fn)(const char *path, int open_flags, int mode,
                                                const struct llapi_layout *layout);

/* liblustreapi's sentinels (LLAPI_LAYOUT_DEFAULT, _WIDE, _RAID0, ...) all lie above this. */
#define LLAPI_SENTINEL_MIN (1ULL << 60)

/* Order matters: bit i of hpcn_lustre_probe_t.missing refers to entry i. */
static const char *const symbol_names[HPCN_LUSTRE_SYMBOL_COUNT] = {
    "llapi_layout_get_by_path",
    "llapi_layout_free",
    "llapi_layout_stripe_count_get",
    "llapi_layout_stripe_size_get",
    "llapi_layout_ost_index_get",
    "llapi_layout_alloc",
    "llapi_layout_stripe_count_set",
    "llapi_layout_stripe_size_set",
    "llapi_layout_file_create",
};

/* The resolved entry points; copied out of the slot under its lock for each call. */
typedef struct llapi_calls {
    hpcn_llapi_layout_get_by_path_fn get_by_path;
    hpcn_llapi_layout_free_fn free_layout;
    hpcn_llapi_layout_stripe_count_get_fn stripe_count_get;
    hpcn_llapi_layout_stripe_size_get_fn stripe_size_get;
    hpcn_llapi_layout_ost_index_get_fn ost_index_get;
    hpcn_llapi_layout_alloc_fn alloc;
    hpcn_llapi_layout_stripe_count_set_fn stripe_count_set;
    hpcn_llapi_layout_stripe_size_set_fn stripe_size_set;
    hpcn_llapi_layout_file_create_fn file_create;
} llapi_calls_t;

/* The process-wide slot. Guarded by lock because Java may probe from any thread. */
static struct {
    pthread_mutex_t lock;
    void *handle;
    llapi_calls_t calls;
} llapi = { .lock = PTHREAD_MUTEX_INITIALIZER };

const char *hpcn_lustre_symbol_name(unsigned index)
{
    return index < HPCN_LUSTRE_SYMBOL_COUNT ? symbol_names[index] : NULL;
}

static void copy_detail(char *detail, const char *text)
{
    snprintf(detail, HPCN_LUSTRE_DETAIL_MAX, "%s", text != NULL ? text : "");
}

/* Takes ownership of handle: stores it in the empty slot or closes it. */
static void keep_or_close(void *handle, void *const symbols[HPCN_LUSTRE_SYMBOL_COUNT])
{
    pthread_mutex_lock(&llapi.lock);
    if (llapi.handle == NULL) {
        llapi.handle = handle;
        /* POSIX guarantees dlsym's object pointers convert to function pointers. */
        llapi.calls.get_by_path = (hpcn_llapi_layout_get_by_path_fn)symbols[0];
        llapi.calls.free_layout = (hpcn_llapi_layout_free_fn)symbols[1];
        llapi.calls.stripe_count_get = (hpcn_llapi_layout_stripe_count_get_fn)symbols[2];
        llapi.calls.stripe_size_get = (hpcn_llapi_layout_stripe_size_get_fn)symbols[3];
        llapi.calls.ost_index_get = (hpcn_llapi_layout_ost_index_get_fn)symbols[4];
        llapi.calls.alloc = (hpcn_llapi_layout_alloc_fn)symbols[5];
        llapi.calls.stripe_count_set = (hpcn_llapi_layout_stripe_count_set_fn)symbols[6];
        llapi.calls.stripe_size_set = (hpcn_llapi_layout_stripe_size_set_fn)symbols[7];
        llapi.calls.file_create = (hpcn_llapi_layout_file_create_fn)symbols[8];
        handle = NULL;
    }
    pthread_mutex_unlock(&llapi.lock);
    if (handle != NULL)
        dlclose(handle); /* the slot already holds a complete library */
}

int hpcn_lustre_probe(const char *library, hpcn_lustre_probe_t *result_out)
{
    hpcn_lustre_probe_t result;
    void *symbols[HPCN_LUSTRE_SYMBOL_COUNT];
    void *handle;
    unsigned i;

    if (library == NULL || library[0] == '\0' || result_out == NULL)
        return -EINVAL;

    memset(&result, 0, sizeof(result));
    dlerror(); /* clear any stale error so the text below belongs to this probe */
    handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        result.status = HPCN_LUSTRE_NOT_FOUND;
        copy_detail(result.detail, dlerror());
        *result_out = result;
        return 0;
    }

    for (i = 0; i < HPCN_LUSTRE_SYMBOL_COUNT; i++) {
        dlerror();
        symbols[i] = dlsym(handle, symbol_names[i]);
        if (symbols[i] == NULL) {
            const char *err = dlerror();

            if (result.missing == 0)
                copy_detail(result.detail, err);
            result.missing |= 1u << i;
        }
    }

    if (result.missing != 0) {
        result.status = HPCN_LUSTRE_INCOMPLETE;
        goto close_library;
    }

    result.status = HPCN_LUSTRE_AVAILABLE;
    keep_or_close(handle, symbols);
    *result_out = result;
    return 0;

close_library:
    dlclose(handle);
    *result_out = result;
    return 0;
}

int hpcn_lustre_is_loaded(void)
{
    int loaded;

    pthread_mutex_lock(&llapi.lock);
    loaded = llapi.handle != NULL;
    pthread_mutex_unlock(&llapi.lock);
    return loaded;
}

void hpcn_lustre_unload(void)
{
    void *handle;

    pthread_mutex_lock(&llapi.lock);
    handle = llapi.handle;
    llapi.handle = NULL;
    memset(&llapi.calls, 0, sizeof(llapi.calls));
    pthread_mutex_unlock(&llapi.lock);
    if (handle != NULL)
        dlclose(handle);
}

/* Copies the entry points out of the slot; -ENOSYS when no complete library is loaded. */
static int loaded_calls(llapi_calls_t *calls)
{
    int loaded;

    pthread_mutex_lock(&llapi.lock);
    loaded = llapi.handle != NULL;
    *calls = llapi.calls;
    pthread_mutex_unlock(&llapi.lock);
    return loaded ? 0 : -ENOSYS;
}

/* liblustreapi reports failures as -1 + errno in some versions and as -errno in others. */
static int llapi_error(int rc)
{
    if (rc < -1)
        return rc;
    return errno > 0 ? -errno : -EIO;
}

static uint64_t known_or_zero(uint64_t value)
{
    return value >= LLAPI_SENTINEL_MIN ? 0 : value;
}

int hpcn_lustre_layout_get(const char *path, uint64_t *osts, uint32_t capacity,
                           uint64_t *stripe_size_out, uint64_t *stripe_count_out,
                           uint32_t *osts_known_out)
{
    llapi_calls_t calls;
    struct llapi_layout *layout;
    uint64_t size;
    uint64_t count;
    uint32_t known = 0;
    int rc;

    if (path == NULL || (osts == NULL && capacity > 0) || stripe_size_out == NULL ||
        stripe_count_out == NULL || osts_known_out == NULL)
        return -EINVAL;
    rc = loaded_calls(&calls);
    if (rc < 0)
        return rc;

    errno = 0;
    layout = calls.get_by_path(path, 0);
    if (layout == NULL)
        return errno > 0 ? -errno : -ENODATA;
    errno = 0;
    rc = calls.stripe_size_get(layout, &size);
    if (rc < 0) {
        rc = llapi_error(rc);
        goto free_layout;
    }
    errno = 0;
    rc = calls.stripe_count_get(layout, &count);
    if (rc < 0) {
        rc = llapi_error(rc);
        goto free_layout;
    }
    size = known_or_zero(size);
    count = known_or_zero(count);
    /* A stripe without an OST (not yet allocated, a directory) ends the known prefix. */
    while (known < capacity && known < count) {
        uint64_t index;

        if (calls.ost_index_get(layout, known, &index) < 0 || index >= LLAPI_SENTINEL_MIN)
            break;
        osts[known++] = index;
    }
    *stripe_size_out = size;
    *stripe_count_out = count;
    *osts_known_out = known;
    rc = 0;

free_layout:
    calls.free_layout(layout);
    return rc;
}

int hpcn_lustre_file_create(const char *path, uint64_t stripe_size, uint64_t stripe_count,
                            int mode)
{
    llapi_calls_t calls;
    struct llapi_layout *layout;
    int fd;
    int rc;

    if (path == NULL || path[0] == '\0' || stripe_size >= LLAPI_SENTINEL_MIN ||
        stripe_count >= LLAPI_SENTINEL_MIN)
        return -EINVAL;
    rc = loaded_calls(&calls);
    if (rc < 0)
        return rc;

    errno = 0;
    layout = calls.alloc();
    if (layout == NULL)
        return errno > 0 ? -errno : -ENOMEM;
    errno = 0;
    if (stripe_size != 0 && (rc = calls.stripe_size_set(layout, stripe_size)) < 0) {
        rc = llapi_error(rc);
        goto free_layout;
    }
    errno = 0;
    if (stripe_count != 0 && (rc = calls.stripe_count_set(layout, stripe_count)) < 0) {
        rc = llapi_error(rc);
        goto free_layout;
    }
    errno = 0;
    fd = calls.file_create(path, O_WRONLY | O_CLOEXEC, mode, layout);
    if (fd < 0) {
        rc = llapi_error(fd);
        goto free_layout;
    }
    close(fd);
    rc = 0;

free_layout:
    calls.free_layout(layout);
    return rc;
}
