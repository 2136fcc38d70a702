/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * Memory locking and page-cache advice for the DataNode's cache manipulator (RAM_DISK replicas,
 * HDFS centralized caching), so a DataNode can lock memory without Hadoop's libhadoop.so.
 */
#include "hpcn.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

int hpcn_mlock(const void *addr, size_t len)
{
    if (addr == NULL && len > 0)
        return -EINVAL;
    return mlock(addr, len) == 0 ? 0 : -errno;
}

int hpcn_munlock(const void *addr, size_t len)
{
    if (addr == NULL && len > 0)
        return -EINVAL;
    return munlock(addr, len) == 0 ? 0 : -errno;
}

#define CAP_IPC_LOCK_BIT 14 /* linux/capability.h */

/* 1 if CAP_IPC_LOCK is in the effective set (from /proc/self/status), 0 if not or unknown. */
static int has_cap_ipc_lock(void)
{
    char line[256];
    uint64_t effective = 0;
    int found = 0;
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f) != NULL)
        found = sscanf(line, "CapEff: %" SCNx64, &effective) == 1;
    fclose(f);
    return found && (effective & (UINT64_C(1) << CAP_IPC_LOCK_BIT)) != 0;
}

int hpcn_memlock_limit(uint64_t *limit_out)
{
    struct rlimit limit;

    if (limit_out == NULL)
        return -EINVAL;
    if (getrlimit(RLIMIT_MEMLOCK, &limit) != 0)
        return -errno;
    if (limit.rlim_cur == RLIM_INFINITY || has_cap_ipc_lock())
        *limit_out = UINT64_MAX;
    else
        *limit_out = (uint64_t)limit.rlim_cur;
    return 0;
}

long hpcn_page_size(void)
{
    long size;

    errno = 0;
    size = sysconf(_SC_PAGESIZE);
    if (size <= 0)
        return errno != 0 ? -errno : -EINVAL;
    return size;
}

int hpcn_fadvise(int fd, uint64_t offset, uint64_t len, int advice)
{
    static const int advices[] = {
        POSIX_FADV_NORMAL, POSIX_FADV_RANDOM, POSIX_FADV_SEQUENTIAL,
        POSIX_FADV_WILLNEED, POSIX_FADV_DONTNEED, POSIX_FADV_NOREUSE,
    };
    int rc;

    if (advice < 0 || advice >= (int)(sizeof(advices) / sizeof(advices[0])) ||
        offset > INT64_MAX || len > INT64_MAX)
        return -EINVAL;
    rc = posix_fadvise(fd, (off_t)offset, (off_t)len, advices[advice]);
    return -rc; /* posix_fadvise returns the error number rather than setting errno */
}
