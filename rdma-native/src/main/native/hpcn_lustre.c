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
#include <pthread.h>
#include <stdio.h>
#include <string.h>

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
                                                  int stripe_number, uint64_t *index);

/* Order matters: bit i of hpcn_lustre_probe_t.missing refers to entry i. */
static const char *const symbol_names[HPCN_LUSTRE_SYMBOL_COUNT] = {
    "llapi_layout_get_by_path",
    "llapi_layout_free",
    "llapi_layout_stripe_count_get",
    "llapi_layout_stripe_size_get",
    "llapi_layout_ost_index_get",
};

/*
 * The process-wide slot. The layout API (a later issue) calls through these pointers; until
 * then they are only resolved and held. Guarded by lock because Java may probe from any thread.
 */
static struct {
    pthread_mutex_t lock;
    void *handle;
    hpcn_llapi_layout_get_by_path_fn get_by_path;
    hpcn_llapi_layout_free_fn free_layout;
    hpcn_llapi_layout_stripe_count_get_fn stripe_count_get;
    hpcn_llapi_layout_stripe_size_get_fn stripe_size_get;
    hpcn_llapi_layout_ost_index_get_fn ost_index_get;
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
        llapi.get_by_path = (hpcn_llapi_layout_get_by_path_fn)symbols[0];
        llapi.free_layout = (hpcn_llapi_layout_free_fn)symbols[1];
        llapi.stripe_count_get = (hpcn_llapi_layout_stripe_count_get_fn)symbols[2];
        llapi.stripe_size_get = (hpcn_llapi_layout_stripe_size_get_fn)symbols[3];
        llapi.ost_index_get = (hpcn_llapi_layout_ost_index_get_fn)symbols[4];
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
    llapi.get_by_path = NULL;
    llapi.free_layout = NULL;
    llapi.stripe_count_get = NULL;
    llapi.stripe_size_get = NULL;
    llapi.ost_index_get = NULL;
    pthread_mutex_unlock(&llapi.lock);
    if (handle != NULL)
        dlclose(handle);
}
