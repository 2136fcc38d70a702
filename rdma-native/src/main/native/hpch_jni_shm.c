/*
 * Licensed under the Apache License, Version 2.0 (see LICENSE.txt).
 *
 * org.apache.hadoop.io.nativeio.SharedFileDescriptorFactory: every DataNode builds its
 * ShortCircuitRegistry with one as soon as NativeIO is available, and catches IOException but
 * not UnsatisfiedLinkError, so these two must exist for a DataNode to start. The registry then
 * finds DomainSocketWatcher unavailable (not in this library) and turns itself off; the files
 * are what short-circuit shared memory would be mapped from.
 *
 * Files live in a directory other users may write to (/dev/shm, /tmp by default): a name with
 * 64 random bits, O_EXCL | O_NOFOLLOW, mode 0600, unlinked at once so only the descriptor
 * remains; stale ones (a crash between create and unlink) are removed only when they are
 * regular files of ours.
 */
#include "hpch_jni.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define CREATE_ATTEMPTS 16

/* Both strings as the platform sees them; 0, or -1 with an exception pending. */
static int two_strings(JNIEnv *env, jstring a, jstring b, const char **a_out, const char **b_out)
{
    if (a == NULL || b == NULL) {
        hpch_throw(env, "java/lang/NullPointerException", "prefix and path must not be null");
        return -1;
    }
    *a_out = (*env)->GetStringUTFChars(env, a, NULL);
    if (*a_out == NULL)
        return -1;
    *b_out = (*env)->GetStringUTFChars(env, b, NULL);
    if (*b_out == NULL) {
        (*env)->ReleaseStringUTFChars(env, a, *a_out);
        return -1;
    }
    return 0;
}

/* Creates, sizes and unlinks one file; the descriptor, or -errno. */
static int create_unlinked(const char *dir, const char *prefix, off_t length)
{
    char name[PATH_MAX];

    for (int attempt = 0; attempt < CREATE_ATTEMPTS; attempt++) {
        uint64_t suffix;
        int fd;
        int rc;

        if (getrandom(&suffix, sizeof(suffix), 0) != (ssize_t)sizeof(suffix))
            return -errno;
        if (snprintf(name, sizeof(name), "%s/%s_%016" PRIx64, dir, prefix, suffix) >=
            (int)sizeof(name))
            return -ENAMETOOLONG;
        fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            if (errno == EEXIST)
                continue;
            return -errno;
        }
        if (unlink(name) != 0) {
            rc = -errno;
            close(fd);
            return rc;
        }
        /* reserve the pages now: a sparse file on a full tmpfs would SIGBUS the mapper */
        rc = posix_fallocate(fd, 0, length);
        if (rc == EOPNOTSUPP || rc == EINVAL)
            rc = ftruncate(fd, length) == 0 ? 0 : errno;
        if (rc != 0) {
            close(fd);
            return -rc;
        }
        return fd;
    }
    return -EEXIST;
}

JNIEXPORT jobject JNICALL
Java_org_apache_hadoop_io_nativeio_SharedFileDescriptorFactory_createDescriptor0(
    JNIEnv *env, jclass cls, jstring jprefix, jstring jpath, jint length)
{
    const char *prefix;
    const char *path;
    jclass fd_class;
    jmethodID ctor;
    jfieldID field;
    jobject descriptor = NULL;
    int fd;

    (void)cls;
    if (length <= 0) {
        hpch_throw_errno(env, EINVAL, "shared file length");
        return NULL;
    }
    if (two_strings(env, jprefix, jpath, &prefix, &path) != 0)
        return NULL;
    fd = create_unlinked(path, prefix, (off_t)length);
    if (fd < 0)
        hpch_throw_errno(env, -fd, path);
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    (*env)->ReleaseStringUTFChars(env, jprefix, prefix);
    if (fd < 0)
        return NULL;

    fd_class = (*env)->FindClass(env, "java/io/FileDescriptor");
    if (fd_class == NULL)
        goto close_fd;
    ctor = (*env)->GetMethodID(env, fd_class, "<init>", "()V");
    field = (*env)->GetFieldID(env, fd_class, "fd", "I");
    if (ctor != NULL && field != NULL)
        descriptor = (*env)->NewObject(env, fd_class, ctor);
    (*env)->DeleteLocalRef(env, fd_class);
    if (descriptor == NULL)
        goto close_fd;
    (*env)->SetIntField(env, descriptor, field, fd);
    return descriptor;

close_fd:
    close(fd);
    return NULL;
}

JNIEXPORT void JNICALL
Java_org_apache_hadoop_io_nativeio_SharedFileDescriptorFactory_deleteStaleTemporaryFiles0(
    JNIEnv *env, jclass cls, jstring jprefix, jstring jpath)
{
    const char *prefix;
    const char *path;
    size_t prefix_len;
    DIR *dir;
    int err = 0;

    (void)cls;
    if (two_strings(env, jprefix, jpath, &prefix, &path) != 0)
        return;
    prefix_len = strlen(prefix);
    dir = opendir(path);
    if (dir == NULL) {
        err = errno;
        goto release;
    }
    for (;;) {
        struct dirent *entry;
        struct stat st;

        errno = 0;
        entry = readdir(dir);
        if (entry == NULL) {
            err = errno;
            break;
        }
        if (strncmp(entry->d_name, prefix, prefix_len) != 0)
            continue;
        if (fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* gone meanwhile */
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue; /* another user's, or not a file we make: not ours to remove */
        (void)unlinkat(dirfd(dir), entry->d_name, 0); /* best effort, like a tmp cleaner */
    }
    closedir(dir);
release:
    if (err != 0)
        hpch_throw_errno(env, err, path);
    (*env)->ReleaseStringUTFChars(env, jpath, path);
    (*env)->ReleaseStringUTFChars(env, jprefix, prefix);
}
