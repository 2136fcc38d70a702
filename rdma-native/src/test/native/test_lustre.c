/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * liblustreapi probe against a missing library and against the two test doubles built by
 * this tree (paths come from CMake as HPCN_TEST_DOUBLE and HPCN_TEST_DOUBLE_INCOMPLETE), and
 * the layout calls against the complete double over a stand-in mount in a temporary directory.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

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

static char mount_dir[] = "/tmp/hpcn-lustre-XXXXXX";
static char outside_dir[] = "/tmp/hpcn-not-lustre-XXXXXX";

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    if (f == NULL)
        return -1;
    fputs(text, f);
    return fclose(f);
}

static void join(char *out, size_t len, const char *dir, const char *name)
{
    snprintf(out, len, "%s/%s", dir, name);
}

static int layout_calls_need_a_loaded_library(void)
{
    uint64_t osts[4], size, count;
    uint32_t known;

    hpcn_lustre_unload();
    HPCN_CHECK(hpcn_lustre_layout_get("/", osts, 4, &size, &count, &known) == -ENOSYS);
    HPCN_CHECK(hpcn_lustre_file_create("/tmp/x", 0, 0, 0644) == -ENOSYS);
    HPCN_CHECK(hpcn_lustre_layout_get(NULL, osts, 4, &size, &count, &known) == -EINVAL);
    return 0;
}

static int created_file_has_the_asked_layout_after_a_rename(void)
{
    hpcn_lustre_probe_t probe;
    char path[256], renamed[256];
    uint64_t osts[8], size = 0, count = 0;
    uint32_t known = 0, i;

    HPCN_CHECK(hpcn_lustre_probe(HPCN_TEST_DOUBLE, &probe) == 0);
    HPCN_CHECK(probe.status == HPCN_LUSTRE_AVAILABLE);
    join(path, sizeof(path), mount_dir, "striped");
    HPCN_CHECK(hpcn_lustre_file_create(path, 4u << 20, 3, 0644) == 0);
    join(renamed, sizeof(renamed), mount_dir, "renamed");
    HPCN_CHECK(rename(path, renamed) == 0);

    HPCN_CHECK(hpcn_lustre_layout_get(renamed, osts, 8, &size, &count, &known) == 0);
    HPCN_CHECK(size == 4u << 20);
    HPCN_CHECK(count == 3);
    HPCN_CHECK(known == 3);
    for (i = 0; i < known; i++)
        HPCN_CHECK(osts[i] == (osts[0] + i) % 5); /* the marker says osts=5 */

    /* capacity bounds what is written */
    HPCN_CHECK(hpcn_lustre_layout_get(renamed, osts, 2, &size, &count, &known) == 0);
    HPCN_CHECK(count == 3 && known == 2);
    return 0;
}

static int create_refuses_existing_files_and_bad_stripe_sizes(void)
{
    char path[256];
    struct stat st;

    join(path, sizeof(path), mount_dir, "renamed");
    HPCN_CHECK(hpcn_lustre_file_create(path, 0, 0, 0644) == -EEXIST);
    join(path, sizeof(path), mount_dir, "unaligned");
    HPCN_CHECK(hpcn_lustre_file_create(path, 1000, 1, 0644) == -EINVAL);
    HPCN_CHECK(stat(path, &st) != 0 && errno == ENOENT);
    HPCN_CHECK(hpcn_lustre_file_create(path, 1ULL << 62, 1, 0644) == -EINVAL);
    return 0;
}

static int plain_files_and_directories_get_the_mount_defaults(void)
{
    char path[256];
    uint64_t osts[8], size, count;
    uint32_t known;

    join(path, sizeof(path), mount_dir, "plain");
    HPCN_CHECK(write_text(path, "data") == 0);
    HPCN_CHECK(hpcn_lustre_layout_get(path, osts, 8, &size, &count, &known) == 0);
    HPCN_CHECK(size == 2u << 20 && count == 2 && known == 2);
    HPCN_CHECK(osts[1] == (osts[0] + 1) % 5);

    HPCN_CHECK(hpcn_lustre_layout_get(mount_dir, osts, 8, &size, &count, &known) == 0);
    HPCN_CHECK(size == 2u << 20 && count == 2 && known == 0);
    return 0;
}

static int paths_off_the_mount_are_not_on_lustre(void)
{
    char path[256];
    uint64_t osts[8], size = 7, count = 7;
    uint32_t known = 7;

    join(path, sizeof(path), outside_dir, "file");
    HPCN_CHECK(write_text(path, "data") == 0);
    HPCN_CHECK(hpcn_lustre_layout_get(path, osts, 8, &size, &count, &known) == -ENOTTY);
    HPCN_CHECK(size == 7 && count == 7 && known == 7); /* outputs untouched */
    join(path, sizeof(path), outside_dir, "new");
    HPCN_CHECK(hpcn_lustre_file_create(path, 0, 0, 0644) == -ENOTTY);
    join(path, sizeof(path), mount_dir, "missing");
    HPCN_CHECK(hpcn_lustre_layout_get(path, osts, 8, &size, &count, &known) == -ENOENT);
    return 0;
}

static void remove_tree(const char *dir)
{
    char command[512];

    snprintf(command, sizeof(command), "rm -rf '%s'", dir);
    if (system(command) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    char marker[256];
    int failures = 0;

    failures += HPCN_RUN(missing_library_is_not_found_with_dlerror_text);
    failures += HPCN_RUN(complete_double_is_available_and_kept);
    failures += HPCN_RUN(incomplete_double_names_the_missing_symbol);
    failures += HPCN_RUN(bad_arguments_leave_the_result_untouched);

    if (mkdtemp(mount_dir) == NULL || mkdtemp(outside_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    join(marker, sizeof(marker), mount_dir, ".lustre-double");
    if (write_text(marker, "osts=5 stripe_size=2097152 stripe_count=2\n") != 0) {
        perror(marker);
        return 1;
    }
    /* The double keeps layouts in user xattrs: say so rather than fail three checks later. */
    if (setxattr(marker, "user.hpcn_test_probe", "1", 1, 0) != 0) {
        fprintf(stderr,
                "test_lustre: %s has no user xattrs (%s); the Lustre test double keeps layouts "
                "in them: give /tmp a file system that has them (ext4, xfs, tmpfs on Linux >= "
                "6.6)\n",
                mount_dir, strerror(errno));
        remove_tree(mount_dir);
        remove_tree(outside_dir);
        return 1;
    }
    failures += HPCN_RUN(layout_calls_need_a_loaded_library);
    failures += HPCN_RUN(created_file_has_the_asked_layout_after_a_rename);
    failures += HPCN_RUN(create_refuses_existing_files_and_bad_stripe_sizes);
    failures += HPCN_RUN(plain_files_and_directories_get_the_mount_defaults);
    failures += HPCN_RUN(paths_off_the_mount_are_not_on_lustre);
    remove_tree(mount_dir);
    remove_tree(outside_dir);
    hpcn_lustre_unload();
    return failures == 0 ? 0 : 1;
}
