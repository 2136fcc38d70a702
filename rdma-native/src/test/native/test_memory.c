/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Memory locking and page-cache advice (hpcn_memory.c): lock and unlock real pages, read the
 * limit that applies, advise a real file, and refuse bad arguments with -errno.
 */
#include "hpcn.h"
#include "hpcn_test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static int page_size_is_a_power_of_two(void)
{
    long size = hpcn_page_size();

    HPCN_CHECK(size >= 4096);
    HPCN_CHECK((size & (size - 1)) == 0);
    return 0;
}

static int locks_and_unlocks_pages_within_the_limit(void)
{
    long page = hpcn_page_size();
    size_t len = 4 * (size_t)page;
    uint64_t limit;
    void *pages;

    HPCN_CHECK(hpcn_memlock_limit(&limit) == 0);
    HPCN_CHECK(limit >= len); /* 4 pages: below any limit a distribution ships (64 KiB+) */
    pages = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    HPCN_CHECK(pages != MAP_FAILED);
    memset(pages, 0x5a, len);
    HPCN_CHECK(hpcn_mlock(pages, len) == 0);
    HPCN_CHECK(hpcn_munlock(pages, len) == 0);
    HPCN_CHECK(munmap(pages, len) == 0);
    return 0;
}

static int the_limit_follows_rlimit_memlock(void)
{
    struct rlimit saved, low;
    uint64_t limit;
    int rc = 0;

    HPCN_CHECK(getrlimit(RLIMIT_MEMLOCK, &saved) == 0);
    low = saved;
    low.rlim_cur = 65536;
    if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < low.rlim_cur)
        low.rlim_cur = saved.rlim_max;
    HPCN_CHECK(setrlimit(RLIMIT_MEMLOCK, &low) == 0);
    if (hpcn_memlock_limit(&limit) != 0)
        rc = 1;
    else if (limit != UINT64_MAX && limit != (uint64_t)low.rlim_cur)
        rc = 1; /* UINT64_MAX only with CAP_IPC_LOCK: mlock does not check the limit then */
    HPCN_CHECK(setrlimit(RLIMIT_MEMLOCK, &saved) == 0);
    HPCN_CHECK(rc == 0);
    if (limit == UINT64_MAX)
        printf("(CAP_IPC_LOCK held: the limit does not apply) ");
    return 0;
}

static int advises_a_file_and_refuses_bad_advice(void)
{
    char path[] = "/tmp/hpcn-fadvise-XXXXXX";
    char block[8192];
    int fd = mkstemp(path);

    HPCN_CHECK(fd >= 0);
    unlink(path);
    memset(block, 'x', sizeof(block));
    HPCN_CHECK(write(fd, block, sizeof(block)) == (ssize_t)sizeof(block));
    HPCN_CHECK(hpcn_fadvise(fd, 0, 0, 4 /* DONTNEED */) == 0);
    HPCN_CHECK(hpcn_fadvise(fd, 0, 4096, 3 /* WILLNEED */) == 0);
    HPCN_CHECK(hpcn_fadvise(fd, 0, 0, 2 /* SEQUENTIAL */) == 0);
    HPCN_CHECK(hpcn_fadvise(fd, 0, 0, 6) == -EINVAL);
    HPCN_CHECK(hpcn_fadvise(fd, 0, 0, -1) == -EINVAL);
    HPCN_CHECK(hpcn_fadvise(fd, UINT64_MAX, 0, 0) == -EINVAL);
    HPCN_CHECK(close(fd) == 0);
    HPCN_CHECK(hpcn_fadvise(fd, 0, 0, 0) == -EBADF);
    return 0;
}

static int bad_arguments_are_refused(void)
{
    HPCN_CHECK(hpcn_mlock(NULL, 4096) == -EINVAL);
    HPCN_CHECK(hpcn_munlock(NULL, 4096) == -EINVAL);
    HPCN_CHECK(hpcn_memlock_limit(NULL) == -EINVAL);
    return 0;
}

int main(void)
{
    int failures = 0;

    failures += HPCN_RUN(page_size_is_a_power_of_two);
    failures += HPCN_RUN(locks_and_unlocks_pages_within_the_limit);
    failures += HPCN_RUN(the_limit_follows_rlimit_memlock);
    failures += HPCN_RUN(advises_a_file_and_refuses_bad_advice);
    failures += HPCN_RUN(bad_arguments_are_refused);
    return failures == 0 ? 0 : 1;
}
